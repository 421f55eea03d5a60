/**
 * Many machines over one bucket project, as separate processes that share nothing but the bucket:
 * each "machine" has a home, cache, models folder and temporary folder of its own. Two `serve
 * --no-worker` replicas take the same new ids at once while two `semsearch worker` processes index,
 * one of them SIGKILLed half-way and replaced by a third: every object is stored once and indexed
 * exactly once, and both replicas answer the same. Skipped without the tests' S3 server.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, runCli, userEnv, type RunOptions } from "../helpers/cli.js";
import { freshBucket, s3Available, s3Env, type TestBucket } from "../helpers/s3.js";
import { call, serve, waitUntil, type Served } from "../helpers/serve.js";

const SEEDED = 160;
const SHARED = 40;

/** A machine's own folders: nothing of one is seen by another. */
function machine(name: string): Record<string, string> {
  const home = mkdtempSync(path.join(tmpdir(), `semsearch-machine-${name}-`));
  for (const dir of ["cache", "tmp"]) mkdirSync(path.join(home, dir));
  return { ...s3Env(), HOME: home, XDG_CACHE_HOME: path.join(home, "cache"), SEMSEARCH_MODELS: path.join(home, "cache", "semsearch", "models"), TMPDIR: path.join(home, "tmp"), SEMSEARCH_LEASE_SECONDS: "3" };
}

describe.skipIf(!s3Available())("machines sharing a bucket project", () => {
  let bucket: TestBucket;
  beforeAll(async () => {
    bucket = await freshBucket("bucket-machines");
  });
  afterAll(async () => bucket?.remove());

  async function ok(env: Record<string, string>, args: string[], options: RunOptions = {}) {
    const result = await runCli(["--project", bucket.uri("shared"), "--json", ...args], { cwd: env.HOME, ...options, env });
    expect(result.exitCode, `${args.join(" ")}: ${result.stderr}`).toBe(0);
    return JSON.parse(result.stdout);
  }

  function worker(env: Record<string, string>) {
    const child = spawn(process.execPath, [BIN, "--project", bucket.uri("shared"), "worker", "--poll-ms", "100"], { cwd: env.HOME, env: userEnv(env), stdio: ["ignore", "ignore", "pipe"] });
    let log = "";
    child.stderr.on("data", (chunk) => (log += chunk));
    return { child, log: () => log, exited: new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code))) };
  }

  it("two replicas and two workers: the same ids through both replicas at once, a worker killed half-way, every object indexed once", async () => {
    const admin = machine("admin");
    const seeded = Array.from({ length: SEEDED }, (_, i) => JSON.stringify({ id: `s${i}`, title: `Seed ${i}`, body: `A river story number ${i}, with meadows and hills.` })).join("\n");
    await ok(admin, ["objects", "add", "-"], { input: seeded });
    const workers = [worker(machine("w1")), worker(machine("w2"))];
    const replicas: Served[] = [];
    try {
      await waitUntil(() => workers.every((w) => w.log().includes("worker running in the foreground")), "both workers");
      const { id } = await ok(admin, ["index", "create", "--searchable", "title,body"]);
      for (const name of ["r1", "r2"]) replicas.push(await serve(bucket.uri("shared"), ["--no-worker", "--no-auth", "--no-local-socket"], machine(name)));
      for (const replica of replicas) await waitUntil(async () => (await call(`${replica.url}/readyz`, null)).status === 200, "a replica ready");

      // the same 40 new ids through both replicas at once, three times over
      for (let round = 0; round < 3; round++) {
        const answers = await Promise.all(
          replicas.map((replica, r) => {
            const body = Array.from({ length: SHARED }, (_, i) => ({ id: `dup${i}`, title: `Shared ${i}`, body: `Written through replica ${r + 1} in round ${round}.` }));
            return call(`${replica.url}/v1/objects`, null, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
          }),
        );
        for (const answer of answers) expect(answer.status, answer.text).toBe(200);
      }
      // a write answered by one replica is read at once by the other
      const seen = await call(`${replicas[1]?.url}/v1/objects/dup7`, null);
      expect(seen.json.object.body).toMatch(/^Written through replica [12] in round 2\.$/);

      // one worker is killed once it has indexed something; a third machine's worker joins
      await waitUntil(() => workers.some((w) => /: indexed/.test(w.log())), "a first batch indexed");
      workers[0]?.child.kill("SIGKILL");
      workers.push(worker(machine("w3")));

      const total = SEEDED + SHARED;
      await waitUntil(async () => {
        const status = (await call(`${replicas[0]?.url}/v1/indexes/${id}/status`, null)).json.status;
        return status.READY === total && status.UPLOADED === 0 && status.PROCESSING === 0;
      }, "every object indexed");

      // every object stored once, and in the index exactly once
      const listed = (await call(`${replicas[1]?.url}/v1/objects?limit=1000`, null)).json.objects.map((o: { id: string }) => o.id);
      expect(listed).toHaveLength(total);
      expect(new Set(listed).size).toBe(total);
      const { LanceStore } = (await import(new URL("../../dist/engine/store/lance-store.js", import.meta.url).href)) as typeof import("../../src/engine/store/lance-store.js");
      process.env.AWS_ENDPOINT_URL ??= s3Env().AWS_ENDPOINT_URL;
      const store = await LanceStore.open(`${bucket.uri("shared")}/data`);
      try {
        const rows = await store.rowIds(`index_${id}`);
        expect(rows).toHaveLength(total);
        expect(new Set(rows).size).toBe(total);
      } finally {
        store.close();
      }
      // both replicas answer a search alike, and find the newest text of a shared object
      const searches = await Promise.all(replicas.map((replica) => call(`${replica.url}/v1/indexes/${id}/search?query=${encodeURIComponent("written through replica round 2")}&limit=5`, null)));
      expect(searches[0]?.json).toEqual(searches[1]?.json);
      expect(searches[0]?.json.results.length).toBe(5);
      // no machine started a background worker
      expect(await bucket.keys("shared/state/leases/worker/")).toEqual([]);
    } finally {
      for (const w of workers) w.child.kill("SIGTERM");
      for (const replica of replicas) await replica.stop();
    }
    expect((await Promise.all(workers.slice(1).map((w) => w.exited))).every((code) => code === 0)).toBe(true);
  });
});
