/**
 * What `npm run bench:s3` runs against: the bench corpus as a JSON Lines file, a bucket of its own on
 * the S3 server (AWS SDK, straight to the server, never through the counting proxy), and the real
 * CLI as child processes: one-shot commands, foreground workers whose log lines are followed, and
 * `semsearch serve` timed until `GET /readyz` answers 200.
 */
import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from "@aws-sdk/client-s3";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { generateObjects, generateQueries } from "./generate.js";

/**
 * The objects and queries of the bench corpus (corpus.ts), without its embeddings (the engine embeds
 * the objects itself here): the first SciFact abstracts, topped up with generated sentences.
 * Written once to `<dir>/objects.jsonl`.
 */
export function benchCorpus(size: number, evalDir: string, dir: string): { file: string; queries: string[] } {
  const scifact = path.join(evalDir, "scifact");
  const read = (file: string) => (existsSync(path.join(scifact, file)) ? readFileSync(path.join(scifact, file), "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line)) : []);
  const abstracts = read("corpus.jsonl").slice(0, Math.min(size, 5183)).map((row: { _id: string; title: string; text: string }) => ({ id: `sf-${row._id}`, text: `${row.title}\n${row.text}` }));
  const generated = generateObjects(size - abstracts.length, 11).map((o) => ({ id: o.id, text: o.title }));
  const sciQueries = read("queries.jsonl").map((row: { text: string }) => row.text).slice(0, 25);
  const queries = [...sciQueries, ...generateQueries(50 - sciQueries.length)];
  const file = path.join(dir, "objects.jsonl");
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    // (renamed into place whole: a run cut off while writing must not leave a shorter corpus for the next)
    writeFileSync(`${file}.part`, [...abstracts, ...generated].map((doc) => JSON.stringify(doc)).join("\n") + "\n");
    renameSync(`${file}.part`, file);
  }
  return { file, queries };
}

export interface Bucket {
  name: string;
  uri(prefix: string): string;
  /** The newest token of a project's write lease and its holder's pid, or null when free (released or never taken). */
  writeLease(prefix: string): Promise<{ token: string; pid: number } | null>;
  remove(): Promise<void>;
}

function listKeys(client: S3Client, bucket: string, prefix?: string): Promise<string[]> {
  const keys: string[] = [];
  const page = async (token?: string): Promise<string[]> => {
    const answer = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const object of answer.Contents ?? []) if (object.Key) keys.push(object.Key);
    return answer.NextContinuationToken ? page(answer.NextContinuationToken) : keys;
  };
  return page();
}

/** A new bucket on the server in AWS_ENDPOINT_URL, path-style, from the environment's keys. */
export async function freshBucket(endpoint: string): Promise<Bucket> {
  const client = new S3Client({ endpoint, region: process.env.AWS_REGION ?? "us-east-1", forcePathStyle: true });
  const name = `bench-s3-${process.pid}-${randomBytes(4).toString("hex")}`;
  await client.send(new CreateBucketCommand({ Bucket: name }));
  return {
    name,
    uri: (prefix) => `s3://${name}/${prefix}`,
    async writeLease(prefix) {
      const keys = await listKeys(client, name, `${prefix}/state/leases/write/`);
      const token = keys.filter((key) => /\/\d{12}$/.test(key)).sort().at(-1);
      if (token === undefined || keys.includes(`${token}.released`)) return null;
      const body = await (await client.send(new GetObjectCommand({ Bucket: name, Key: token }))).Body?.transformToString();
      return { token, pid: (JSON.parse(body ?? "{}") as { holder?: { pid?: number } }).holder?.pid ?? -1 };
    },
    async remove() {
      // (a writer killed mid-upload, as the lease bench's are, leaves its upload behind, which keeps the bucket from going)
      for (const upload of (await client.send(new ListMultipartUploadsCommand({ Bucket: name }))).Uploads ?? []) {
        await client.send(new AbortMultipartUploadCommand({ Bucket: name, Key: upload.Key, UploadId: upload.UploadId }));
      }
      const keys = await listKeys(client, name);
      for (let i = 0; i < keys.length; i += 1000) {
        await client.send(new DeleteObjectsCommand({ Bucket: name, Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true } }));
      }
      await client.send(new DeleteBucketCommand({ Bucket: name }));
    },
  };
}

/** The semsearch processes this bench started and that have not exited: `stopChildren` kills them. */
const children = new Set<ChildProcess>();

/** Keeps `child` in the set of live children until it exits. */
export function tracked<T extends ChildProcess>(child: T): T {
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

/** SIGKILLs every child still running (the bench was interrupted: workers and servers would otherwise run on). */
export function stopChildren(): number {
  for (const child of children) child.kill("SIGKILL");
  return children.size;
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs `semsearch <args>` to its end, timed from spawn to exit (async: the proxy shares this process). */
export async function runCli(bin: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  const started = performance.now();
  const child = tracked(spawn(process.execPath, [bin, ...args], { env, stdio: ["ignore", "pipe", "pipe"] }));
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await exitOf(child);
  return { code, stdout, stderr, ms: performance.now() - started };
}

/** Like runCli, but throws when the command fails. */
export async function mustRun(bin: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  const run = await runCli(bin, args, env);
  if (run.code !== 0) throw new Error(`semsearch ${args.join(" ")} exited ${run.code}:\n${run.stderr.slice(-3000)}`);
  return run;
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

/** Resolves once `check` is true, looking every `everyMs`; throws after `timeoutMs` naming `what`. */
export async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 25): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** A worker's log line that matters here, with when this process read it (performance.now()). */
export type WorkerEvent = { at: number; kind: "indexed"; index: string; count: number } | { at: number; kind: "optimized"; index: string } | { at: number; kind: "compacted" };

export interface WorkerProcess {
  pid: number;
  /** Its "indexed N objects", "optimized up to seq" and "compacted the object table" lines so far, in order. */
  events: WorkerEvent[];
  /** SIGTERM (the batch in progress commits), then its exit code. */
  stop(): Promise<number | null>;
}

/** Starts `semsearch worker run` in the foreground and resolves once it says it is running. */
export async function startWorker(bin: string, project: string, env: NodeJS.ProcessEnv): Promise<WorkerProcess> {
  const child = tracked(spawn(process.execPath, [bin, "--project", project, "worker", "run"], { env, stdio: ["ignore", "ignore", "pipe"] }));
  const events: WorkerEvent[] = [];
  let running = false;
  let tail = "";
  createInterface({ input: child.stderr }).on("line", (line) => {
    const at = performance.now();
    tail = (tail + line + "\n").slice(-3000);
    const batch = /(idx_\w+): indexed (\d+) objects/.exec(line);
    if (batch) events.push({ at, kind: "indexed", index: batch[1] as string, count: Number(batch[2]) });
    const optimized = /(idx_\w+): optimized up to seq/.exec(line);
    if (optimized) events.push({ at, kind: "optimized", index: optimized[1] as string });
    if (line.includes("compacted the object table")) events.push({ at, kind: "compacted" });
    if (line.includes("worker running in the foreground")) running = true;
  });
  await waitUntil("the worker to start", () => {
    if (child.exitCode !== null) throw new Error(`semsearch worker run exited ${child.exitCode}:\n${tail}`);
    return running;
  }, 60_000);
  return {
    pid: child.pid as number,
    events,
    async stop() {
      child.kill("SIGTERM");
      const code = await exitOf(child);
      if (code !== 0) process.stderr.write(`worker ${child.pid} exited ${code}:\n${tail}\n`);
      return code;
    },
  };
}

export interface ServeProcess {
  url: string;
  /** From spawn until `GET /readyz` first answered 200, in ms. */
  readyMs: number;
  stop(): Promise<number | null>;
}

/**
 * Starts `semsearch serve` on a free loopback port without keys, a worker, an access log or the
 * local socket (so the CLI's cold searches never reach it), and resolves once `/readyz` answers 200
 * (looked at every 25 ms).
 */
export async function startServe(bin: string, project: string, env: NodeJS.ProcessEnv): Promise<ServeProcess> {
  const started = performance.now();
  const args = [bin, "--project", project, "serve", "--host", "127.0.0.1", "--port", "0", "--no-auth", "--no-worker", "--no-access-log", "--no-local-socket"];
  const child = tracked(spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] }));
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-3000)));
  const failed = () => new Error(`semsearch serve exited ${child.exitCode}:\n${stderr}`);
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", () => reject(failed()));
  });
  const ready = async () => {
    if (child.exitCode !== null) throw failed();
    const answer = await fetch(`${url}/readyz`).catch(() => null);
    await answer?.arrayBuffer();
    return answer?.status === 200;
  };
  await waitUntil("/readyz", ready, 600_000);
  const readyMs = performance.now() - started;
  return {
    url,
    readyMs,
    async stop() {
      child.kill("SIGTERM");
      return exitOf(child);
    },
  };
}
