/**
 * `npm run bench:s3`: what a project in an S3 bucket costs against a local one, on the bench corpus
 * (SciFact abstracts topped up with generated sentences), against the S3 server in AWS_ENDPOINT_URL
 * (`.ci/s3-server start`: Ceph RGW on 127.0.0.1). Each bucket figure comes with the S3 requests it
 * made, counted by a proxy in this process (s3-proxy.ts) on runs that take turns with the timed ones.
 * Figures are reported, not asserted:
 *
 * 1. warm hybrid search p50/p95 and S3 requests per search: `semsearch serve` on each (s3-search.ts);
 * 2. cold CLI search: a new `semsearch search` process per search, median (s3-search.ts);
 * 3. a replica's time to ready: `semsearch serve --no-worker` until `GET /readyz` answers 200;
 * 4. ingest: `objects add`, then indexing by one and by two foreground workers, each on a fresh
 *    prefix; with --two-indexes also two indexes by one and by two workers (s3-ingest.ts);
 * 5. lease takeover after SIGKILL of a writer holding the write lease (s3-lease.ts).
 *
 *   source <(grep ^export /tmp/s3-bench.env)      (what `.ci/s3-server start` printed)
 *   npm run bench:s3 -- [--objects 10000] [--searches 500] [--cold-runs 10] [--replicas 3] [--takeovers 3] [--two-indexes] [--keep-bucket] [--json]
 *
 * It prints a table (or the report as JSON with --json), and saves the JSON in bench/results/s3-<n>.json.
 * The local project is built once through the CLI and cached (.cache/bench/s3-<n>/local, git-ignored);
 * the bucket projects are made anew each run, in a bucket of their own, removed at the end (kept
 * when the run fails, or with --keep-bucket).
 */
import { cpus, loadavg } from "node:os";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ingest, type IngestResult } from "./s3-ingest.js";
import { measureTakeover } from "./s3-lease.js";
import { startCountingProxy } from "./s3-proxy.js";
import { coldSearches, replicaReady, warmSearches, type Target, type Targets } from "./s3-search.js";
import { benchCorpus, freshBucket, mustRun, stopChildren, waitUntil } from "./s3-setup.js";
import { renderReport, type S3Report } from "./s3-report.js";

const { values } = parseArgs({
  options: {
    objects: { type: "string", default: "10000" },
    searches: { type: "string", default: "500" },
    "cold-runs": { type: "string", default: "10" },
    replicas: { type: "string", default: "3" },
    takeovers: { type: "string", default: "3" },
    "two-indexes": { type: "boolean", default: false },
    "keep-bucket": { type: "boolean", default: false },
    json: { type: "boolean", default: false },
  },
});
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = path.join(ROOT, "bin", "semsearch");
const EVAL_DIR = path.resolve(ROOT, "..", "shared", "eval");
/** A flag that must be a whole number ≥ 1 (0 objects, say, would wait for an index of nothing to be built). */
function positive(name: "objects" | "searches" | "cold-runs" | "replicas" | "takeovers"): number {
  const value = Number(values[name]);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`--${name} must be a whole number ≥ 1, not ${JSON.stringify(values[name])}`);
  return value;
}
const count = positive("objects");
const DIR = path.join(ROOT, ".cache", "bench", `s3-${count}`);
/** Where the report is also saved as JSON (git-ignored, as bench:ingest's). */
const RESULTS = path.join(ROOT, "bench", "results");
const log = (message: string) => process.stderr.write(`${message}\n`);

/** The local project of the corpus (one text index, built by its background worker), built once and cached. */
async function localProject(file: string, env: NodeJS.ProcessEnv): Promise<Target & { build_s: number }> {
  const meta = path.join(DIR, "local.json");
  if (existsSync(meta)) return { ...(JSON.parse(readFileSync(meta, "utf8")) as { project: string; indexId: string; build_s: number }), env };
  const project = path.join(DIR, "local");
  rmSync(project, { recursive: true, force: true });
  log(`building the local project in ${project} (once)…`);
  const started = performance.now();
  const cli = (...args: string[]) => mustRun(BIN, ["--project", project, "--json", ...args], env);
  await cli("objects", "add", file);
  const { id } = JSON.parse((await cli("index", "create", "--wait")).stdout) as { id: string };
  // Settled as the bucket projects are: its worker has optimized, compacted and left.
  await waitUntil("the local worker to exit", async () => !(JSON.parse((await cli("worker", "status")).stdout) as { running: boolean }).running, 30 * 60_000, 1000);
  const built = { project, indexId: id, build_s: Math.round((performance.now() - started) / 1000) };
  writeFileSync(meta, JSON.stringify(built));
  return { ...built, env };
}

async function main(): Promise<void> {
  const endpoint = process.env.AWS_ENDPOINT_URL_S3 ?? process.env.AWS_ENDPOINT_URL;
  if (!endpoint || !process.env.AWS_ACCESS_KEY_ID) {
    throw new Error("no S3 server: start one with `.ci/s3-server start /tmp/s3-bench > /tmp/s3-bench.env` and `source <(grep ^export /tmp/s3-bench.env)`");
  }
  // The counting proxy speaks plain HTTP to the server: a loopback test server, not a cloud endpoint.
  if (new URL(endpoint).protocol !== "http:") throw new Error(`the S3 bench runs against a plain http:// server (.ci/s3-server), not ${endpoint}`);
  const [searches, coldRuns, replicas, takeovers] = [positive("searches"), positive("cold-runs"), positive("replicas"), positive("takeovers")];
  const bucket = await freshBucket(endpoint);
  const proxy = await startCountingProxy(endpoint);
  log(`bucket ${bucket.name} on ${endpoint}, through the proxy ${proxy.url}`);
  // Interrupted, the bench must not leave foreground workers and servers running behind it.
  const interrupted = (signal: NodeJS.Signals) => {
    log(`${signal}: killed ${stopChildren()} semsearch processes; the bucket ${bucket.name} is left on the server`);
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", interrupted).once("SIGTERM", interrupted);
  const localEnv = { ...process.env, NO_COLOR: "1", AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" };
  const env = { ...localEnv, AWS_ENDPOINT_URL: proxy.url, ...(process.env.AWS_ENDPOINT_URL_S3 ? { AWS_ENDPOINT_URL_S3: proxy.url } : {}) };
  let finished = false;
  try {
    const { file, queries } = benchCorpus(count, EVAL_DIR, DIR);
    const local = await localProject(file, localEnv);
    const loadAtStart = loadavg()[0] as number;
    const run = (prefix: string, workers: number, indexes: number) => {
      log(`ingest into ${bucket.uri(prefix)}: ${count} objects, ${indexes} index(es), ${workers} worker(s)…`);
      return ingest({ bin: BIN, project: bucket.uri(prefix), file, count, env, workers, indexes, proxy });
    };
    const ingests: IngestResult[] = [await run("one", 1, 1), await run("two", 2, 1)];
    if (values["two-indexes"]) ingests.push(await run("pair-one", 1, 2), await run("pair-two", 2, 2));
    for (const result of ingests) log(`  ${JSON.stringify(result)}`);
    const indexId = ingests[0]?.index_ids[0] as string;
    const targets: Targets = { local, s3: { project: bucket.uri("one"), indexId, env: localEnv }, counted: { project: bucket.uri("one"), indexId, env } };
    log("warm searches over HTTP…");
    const warm = await warmSearches(BIN, targets, queries, searches, proxy, log);
    log(`  ${JSON.stringify(warm)}\ncold CLI searches…`);
    const cold = await coldSearches(BIN, targets, queries, coldRuns, proxy);
    log(`  ${JSON.stringify(cold)}\nreplicas' time to ready…`);
    const ready = await replicaReady(BIN, targets, replicas, proxy);
    log(`  ${JSON.stringify(ready)}\nlease takeover…`);
    const takeover = await measureTakeover(BIN, bucket, file, DIR, localEnv, takeovers);
    const report: S3Report = {
      objects: count,
      machine: { cores: cpus().length, node: process.version, load_average_1m: { start: Math.round(loadAtStart * 10) / 10, end: Math.round((loadavg()[0] as number) * 10) / 10 } },
      local_build_s: local.build_s,
      warm, cold, ready, ingests, takeover,
    };
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(path.join(RESULTS, `s3-${count}.json`), JSON.stringify(report, null, 2));
    process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : renderReport(report));
    finished = true;
  } finally {
    await proxy.close();
    // (a run that failed keeps its bucket, to look into)
    if (values["keep-bucket"] || !finished) log(`kept the bucket ${bucket.name}`);
    else await bucket.remove();
  }
}

await main();
