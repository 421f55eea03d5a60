/**
 * Projects in an S3 bucket (`--project s3://bucket/prefix`), through the built CLI against the tests'
 * S3 server (Ceph RGW, `.ci/s3-server`): every command, the background worker, keys and a server,
 * a killed add rolled back by the next command, and a store that ignores create-if-absent refused
 * before anything is written. Skipped without the server.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, runCli, userEnv, type RunOptions } from "../helpers/cli.js";
import { freshBucket, s3Available, s3Client, s3Env, type TestBucket } from "../helpers/s3.js";
import { startS3Proxy } from "../helpers/s3-proxy.js";
import { call, serve, waitUntil } from "../helpers/serve.js";

const objects = (prefix: string, count: number, word = "meadow") =>
  Array.from({ length: count }, (_, i) => JSON.stringify({ id: `${prefix}${i}`, title: `Title ${i}`, body: `The ${word} number ${i} lies by the river.`, n: i })).join("\n");

describe.skipIf(!s3Available())("a project in an S3 bucket", () => {
  let bucket: TestBucket;
  /** The working directory of every command: nothing may be written there. */
  let home: string;

  beforeAll(async () => {
    bucket = await freshBucket("bucket-project");
    home = mkdtempSync(path.join(tmpdir(), "semsearch-bucket-"));
  });
  afterAll(async () => bucket?.remove());

  const env = (extra: Record<string, string | undefined> = {}) => ({ ...s3Env(), ...extra });
  /** Where this machine keeps its folders of bucket projects: beside the models (the suite's SEMSEARCH_MODELS). */
  const projectsCache = () => path.join(path.dirname(process.env.SEMSEARCH_MODELS as string), "projects");
  const cli = (project: string, args: string[], options: RunOptions = {}) => runCli(["--project", project, "--json", ...args], { cwd: home, ...options, env: env(options.env) });
  async function ok(project: string, args: string[], options: RunOptions = {}) {
    const result = await cli(project, args, options);
    expect(result.exitCode, `${args.join(" ")}: ${result.stderr}`).toBe(0);
    return JSON.parse(result.stdout);
  }

  /** Every object of `project` is in index `id` exactly once (`count` rows, no id twice), read straight from LanceDB. */
  async function indexedOnce(project: string, id: string, count: number): Promise<void> {
    const { LanceStore } = (await import(new URL("../../dist/engine/store/lance-store.js", import.meta.url).href)) as typeof import("../../src/engine/store/lance-store.js");
    const store = await LanceStore.open(`${project}/data`);
    try {
      const rows = await store.rowIds(`index_${id}`);
      expect(rows, id).toHaveLength(count);
      expect(new Set(rows).size, id).toBe(count);
    } finally {
      store.close();
    }
  }

  /** `semsearch worker` in the foreground on `project`, its stderr kept. */
  function foregroundWorker(project: string, extra: Record<string, string> = {}) {
    const child = spawn(process.execPath, [BIN, "--project", project, "worker", "--poll-ms", "100"], { env: userEnv(env(extra)), stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    return { child, log: () => stderr, exited };
  }

  // (the run's own server only: one given by the environment has no such file)
  const serverEnvFile = path.join(tmpdir(), "s3", "env");
  it.skipIf(!existsSync(serverEnvFile))("`.ci/s3-server start` makes the bucket whose project it prints (docs/deploy.md): a project is made there as printed", async () => {
    const printed = Object.fromEntries([...readFileSync(serverEnvFile, "utf8").matchAll(/^export ([A-Z0-9_]+)=(.*)$/gm)].map((match) => [match[1], match[2]]));
    expect(printed.SEMSEARCH_PROJECT).toBe("s3://semsearch/project");
    // the printed variables alone, as `eval "$(.ci/s3-server start)"` leaves a shell
    const added = await runCli(["--json", "objects", "add", "-"], { cwd: home, input: objects("printed", 2), env: printed });
    expect(added.exitCode, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout).count).toBe(2);
    const listed = await s3Client().send(new ListObjectsV2Command({ Bucket: "semsearch" }));
    const keys = listed.Contents?.map((entry) => entry.Key as string) ?? [];
    expect(keys.filter((key) => key.startsWith("project/data/objects.lance/")).length).toBeGreaterThan(0);
    expect(keys.filter((key) => !key.startsWith("project/"))).toEqual([]);
  });

  it("every command works on it, indexing included, and it lives under its prefix", async () => {
    const project = bucket.uri("team/search");
    expect(await ok(project, ["objects", "add", "-"], { input: objects("a", 12) })).toMatchObject({ count: 12 });
    const { id } = await ok(project, ["index", "create", "--searchable", "title,body", "--highlights", "--field-type", "n=int", "--wait"]);
    expect((await ok(project, ["index", "status", id])).status).toEqual({ UPLOADED: 0, PROCESSING: 0, READY: 12, ERROR: 0 });
    expect((await ok(project, ["index", "list"])).indexes.map((index: { id: string }) => index.id)).toEqual([id]);
    for (const mode of ["hybrid", "lexical", "vector"]) {
      expect((await ok(project, ["search", id, "meadow river", "--mode", mode, "--limit", "20"])).results, mode).toHaveLength(12);
    }
    expect((await ok(project, ["search", id, "meadow", "--filter", "n:>=10"])).results.map((r: { id: string }) => r.id).sort()).toEqual(["a10", "a11"]);
    const highlighted = (await ok(project, ["search", id, "river", "--result-fields", "highlights", "--limit", "1"])).results[0];
    expect(JSON.stringify(highlighted.highlights)).toContain("river");
    expect((await ok(project, ["objects", "get", "a3"])).object.title).toBe("Title 3");
    await ok(project, ["objects", "delete", "a3"]);
    expect((await cli(project, ["objects", "get", "a3"])).exitCode).toBe(3);
    expect((await ok(project, ["search", id, "meadow river", "--limit", "20"])).results).toHaveLength(11);
    // (an add after the index is indexed by a worker the command starts: the killed-worker test below)
    expect((await ok(project, ["worker", "status"])).log).toMatch(new RegExp(`^${projectsCache()}/[0-9a-f]{24}/worker\\.log$`));
    await ok(project, ["index", "delete", id]);
    expect((await ok(project, ["index", "list"])).indexes).toEqual([]);

    const keys = await bucket.keys();
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.filter((key) => !key.startsWith("team/search/"))).toEqual([]);
    expect(keys.some((key) => key.startsWith("team/search/data/objects.lance/"))).toBe(true);
    expect(keys.some((key) => key.startsWith("team/search/state/catalog.json/"))).toBe(true);
    // (leases: the write lease, the background worker's, and its claims on the index)
    const leases = new Set(keys.filter((key) => key.startsWith("team/search/state/leases/")).map((key) => key.split("/")[4]));
    expect([...leases].sort()).toEqual([`claim-${id}`, "worker", "write"]);
    // nothing in the directory the commands ran in (the project's folder of this machine is in the cache)
    expect(readdirSync(home)).toEqual([]);
  });

  it("an add killed half-way leaves nothing of it: the next command rolls the objects back", async () => {
    const project = bucket.uri("killed");
    await ok(project, ["objects", "add", "-"], { input: objects("keep", 5) });
    const killed = await cli(project, ["objects", "add", "-"], { input: objects("lost", 4), env: { SEMSEARCH_FAILPOINT: "add:written" } });
    expect(killed.signal).toBe("SIGKILL");
    // (its write lease is known dead at once: same machine, process gone)
    const listed = await ok(project, ["objects", "list", "--limit", "100"]);
    expect(listed.objects.map((object: { id: string }) => object.id).sort()).toEqual(["keep0", "keep1", "keep2", "keep3", "keep4"]);
    expect(await ok(project, ["objects", "add", "-"], { input: objects("after", 2) })).toMatchObject({ count: 2 });
  });

  it("a worker killed after writing rows, before its progress, is resumed by the next command: every object indexed once", async () => {
    const project = bucket.uri("worker-killed");
    await ok(project, ["objects", "add", "-"], { input: objects("w", 20) });
    // (the background worker inherits the crash point, and kills itself once its first batch's rows are written)
    const { id } = await ok(project, ["index", "create", "--searchable", "title,body"], { env: { SEMSEARCH_FAILPOINT: "worker:rows" } });
    await ok(project, ["index", "status", id, "--wait"]);
    expect((await ok(project, ["index", "status", id])).status).toEqual({ UPLOADED: 0, PROCESSING: 0, READY: 20, ERROR: 0 });
    await indexedOnce(project, id, 20);
  });

  it("a writer stopped past its lease is taken over: its later commits are refused, nothing of its add stays, and it says to retry", async () => {
    const project = bucket.uri("paused");
    const fast = { SEMSEARCH_LEASE_SECONDS: "2" };
    await ok(project, ["objects", "add", "-"], { input: objects("keep", 3), env: fast });
    const big = path.join(mkdtempSync(path.join(tmpdir(), "semsearch-big-")), "big.jsonl");
    writeFileSync(big, objects("lost", 3000));
    const child = spawn(process.execPath, [BIN, "--project", project, "--json", "objects", "add", big], { env: userEnv(env(fast)), stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    try {
      // Stopped once its journal is written (it is writing: the first add wrote the journal's versions
      // 1 and 2, its start and its end), for longer than its lease lasts.
      await waitUntil(async () => (await bucket.keys("paused/state/add.journal/")).length >= 3, "the add's journal", 60_000);
      child.kill("SIGSTOP");
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      // Another writer takes the project over: it fences the tables and rolls the stopped add back.
      await ok(project, ["objects", "add", "-"], { input: objects("next", 2), env: fast });
    } finally {
      child.kill("SIGCONT");
    }
    expect(await exited, stderr).toBe(5);
    expect(JSON.parse(stderr).errors[0].code).toBe("LEASE_LOST");
    const ids = (await ok(project, ["objects", "list", "--limit", "100"])).objects.map((object: { id: string }) => object.id);
    expect(ids.sort()).toEqual(["keep0", "keep1", "keep2", "next0", "next1"]);
  });

  it("several foreground workers share it: each claims an index, every object is indexed once in each, no background worker starts", async () => {
    const project = bucket.uri("workers");
    await ok(project, ["objects", "add", "-"], { input: objects("m", 12) });
    const workers = [0, 1].map(() => foregroundWorker(project));
    try {
      await waitUntil(() => workers.every((worker) => worker.log().includes("worker running in the foreground")), "both workers");
      const ids: string[] = [];
      for (const fields of ["title", "body"]) ids.push((await ok(project, ["index", "create", "--searchable", fields])).id);
      for (const id of ids) await ok(project, ["index", "status", id, "--wait"]);
      for (const id of ids) await indexedOnce(project, id, 12);
      // each index was indexed by one worker; no background worker was started beside them
      for (const id of ids) expect(workers.filter((worker) => worker.log().includes(`${id}: indexed`)), id).toHaveLength(1);
      expect(await bucket.keys("workers/state/leases/worker/")).toEqual([]);
    } finally {
      for (const worker of workers) worker.child.kill("SIGTERM");
    }
    expect(await Promise.all(workers.map((worker) => worker.exited))).toEqual([0, 0]);
    // their presences are gone with them
    expect((await bucket.keys("workers/state/leases/")).filter((key) => key.includes("/leases/workers-"))).toEqual([]);
  });

  it("a worker paused past its claim drops its batch; the worker that took the index over indexes it, each object once", async () => {
    const project = bucket.uri("claim-paused");
    const fast = { SEMSEARCH_LEASE_SECONDS: "2" };
    await ok(project, ["objects", "add", "-"], { input: objects("c", 20) });
    const start = (extra: Record<string, string>) => foregroundWorker(project, { ...fast, ...extra });
    // The first worker stops dead for 3 s (no renewals) each time it has read a batch, past its 2 s claim.
    const paused = start({ SEMSEARCH_FAILPOINT: "worker:read:pause" });
    await waitUntil(() => paused.log().includes("worker running in the foreground"), "the first worker");
    const { id } = await ok(project, ["index", "create", "--searchable", "title,body"], { env: fast });
    await waitUntil(async () => (await bucket.keys(`claim-paused/state/leases/claim-${id}/`)).length > 0, "the first worker's claim");
    const taker = start({});
    try {
      await waitUntil(() => /another worker took the index over/.test(paused.log()), "the paused worker to drop its batch", 60_000);
      await ok(project, ["index", "status", id, "--wait"]);
      // (which worker indexed the rows after that is the workers' race: each object is indexed once either way)
      expect(paused.log()).not.toContain(`${id}: indexed`);
      await indexedOnce(project, id, 20);
    } finally {
      for (const worker of [paused, taker]) worker.child.kill("SIGTERM");
    }
    expect(await Promise.all([paused.exited, taker.exited])).toEqual([0, 0]);
    for (const worker of [paused, taker]) expect(worker.log()).not.toMatch(/This is a bug/);
  });

  it("a replica's searches see its own writes at once, and another machine's within the bound", async () => {
    // (a server reads the tables' versions at most once a second, as it reads the state; its own commits at once)
    const project = bucket.uri("fresh");
    await ok(project, ["objects", "add", "-"], { input: objects("f", 12) });
    const { id } = await ok(project, ["index", "create", "--wait"]);
    const replicas = [await serve(project, ["--no-worker", "--no-auth", "--no-local-socket"], env()), await serve(project, ["--no-worker", "--no-auth", "--no-local-socket"], env())];
    const found = async (url: string | undefined) => (await call(`${url}/v1/indexes/${id}/search?query=meadow&limit=50`, null)).json.results.map((hit: { id: string }) => hit.id).sort();
    try {
      for (const replica of replicas) expect(await found(replica.url)).toHaveLength(12);
      const [a, b] = replicas;
      // searches all along on A, so that it read the index's version just before the delete committed
      let searching = true;
      const meanwhile = (async () => {
        while (searching) await found(a?.url);
      })();
      await new Promise((resolve) => setTimeout(resolve, 300));
      const deleted = await call(`${a?.url}/v1/objects/f3`, null, { method: "DELETE" });
      const after = await found(a?.url);
      searching = false;
      await meanwhile;
      expect(deleted.status).toBe(200);
      expect(after, "the replica that answered the delete").not.toContain("f3");
      await ok(project, ["objects", "delete", "f4"]); // another machine
      const started = Date.now();
      for (;;) {
        const [onA, onB] = [await found(a?.url), await found(b?.url)];
        if (![...onA, ...onB].some((hit: string) => hit === "f3" || hit === "f4")) break;
        expect(Date.now() - started, `still listed: a ${onA}, b ${onB}`).toBeLessThan(2_500);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await found(b?.url)).toHaveLength(10);
    } finally {
      for (const replica of replicas) await replica.stop();
    }
  });

  it("keys created or revoked by the CLI take effect on a running server within the refresh bound", async () => {
    const project = bucket.uri("served");
    await ok(project, ["objects", "add", "-"], { input: objects("s", 3) });
    const first = (await cli(project, ["keys", "create", "--name", "first"])).stdout.trim();
    const key = JSON.parse(first).key as string;
    const server = await serve(project, [], env());
    try {
      expect((await call(`${server.url}/v1/objects/s1`, key)).status).toBe(200);
      const second = JSON.parse((await cli(project, ["keys", "create", "--name", "second"])).stdout).key as string;
      await ok(project, ["keys", "revoke", "first"]);
      let seen = { second: 0, first: 0 };
      const started = Date.now();
      while (Date.now() - started < 5_000) {
        seen = { second: (await call(`${server.url}/v1/objects/s1`, second)).status, first: (await call(`${server.url}/v1/objects/s1`, key)).status };
        if (seen.second === 200 && seen.first === 404) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(seen).toEqual({ second: 200, first: 404 });
      expect(Date.now() - started).toBeLessThan(2_500);
    } finally {
      await server.stop();
    }
  });

  it("a store that does not honour create-if-absent is refused (exit 6) before anything is written", async () => {
    const proxy = await startS3Proxy({ hidePreconditionFailed: true });
    try {
      const project = bucket.uri("unconditional");
      const result = await cli(project, ["objects", "add", "-"], { input: objects("x", 2), env: { AWS_ENDPOINT_URL: proxy.url } });
      expect(result.exitCode, result.stderr).toBe(6);
      const [error] = JSON.parse(result.stderr).errors;
      expect(error.code).toBe("STORE_NOT_CONDITIONAL");
      expect(error.message).toContain(project);
      expect(await bucket.keys("unconditional/")).toEqual([]);
      expect(existsSync(path.join(home, "unconditional"))).toBe(false);
    } finally {
      await proxy.close();
    }
  });
});
