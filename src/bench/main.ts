/**
 * `npm run bench`: ingest throughput and search latency of semsearch on generated objects,
 * beside the raw throughput of the embedding model alone (the limit ingest approaches).
 *
 * Then the peers, side by side on the same corpus: raw LanceDB with the same model (the floor our
 * overhead is measured against), Orama and vectra (hybrid) and MiniSearch (lexical), each in its own
 * process. Corpus embeddings are computed once and cached under .cache/bench/.
 *
 *   npm run bench -- [--objects 10000] [--queries 50] [--cold 10] [--sizes 10000,100000] [--peers semsearch,lancedb,…] [--no-peers] [--no-own] [--json]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { BUNDLED_SPEC, loadModel } from "../engine/embedding/registry.js";
import { createEmbeddingPool, defaultThreadCount } from "../engine/embedding/pool.js";
import { Engine, DEFAULT_MODEL } from "../engine/index.js";
import { loadCorpus, type BenchCorpus } from "./corpus.js";
import { generateObjects, generateQueries } from "./generate.js";
import { PEERS, renderPeers, runPeers, type PeerResult } from "./peers-report.js";
import { percentile, timed } from "./stats.js";

const BIN = fileURLToPath(new URL("../../bin/semsearch", import.meta.url));

const { values } = parseArgs({
  options: {
    objects: { type: "string", default: "10000" },
    queries: { type: "string", default: "50" },
    cold: { type: "string", default: "10" },
    json: { type: "boolean", default: false },
    sizes: { type: "string", default: "10000" },
    "no-peers": { type: "boolean", default: false },
    "no-own": { type: "boolean", default: false },
    peers: { type: "string", default: PEERS.join(",") },
  },
});
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const EVAL_DIR = path.resolve(ROOT, "..", "shared", "eval");
const CACHE_DIR = path.join(ROOT, ".cache", "bench");
const objectCount = Number(values.objects);
const queryCount = Number(values.queries);
const coldCount = Number(values.cold);
const peerNames = values.peers.split(",").map((name) => name.trim());
for (const name of peerNames) if (!(PEERS as readonly string[]).includes(name)) throw new Error(`--peers: no engine "${name}"; known: ${PEERS.join(", ")}`);

function log(message: string) {
  process.stderr.write(message + "\n");
}

async function modelThroughput(texts: string[]) {
  const model = await loadModel(BUNDLED_SPEC);
  await model.embedTexts(texts.slice(0, 5));
  const [, single] = await timed(() => model.embedTexts(texts));
  const pool = createEmbeddingPool(BUNDLED_SPEC);
  try {
    await pool.embed(texts.slice(0, 8 * pool.threads));
    const [, pooled] = await timed(() => pool.embed(texts));
    return { oneThread: texts.length / (single / 1000), allThreads: texts.length / (pooled / 1000), threads: pool.threads };
  } finally {
    await pool.close();
  }
}

/** Texts of the corpus the model's speed is measured on in this run: evenly spread, so long and short ones count as in the whole. */
const MODEL_SAMPLE = 2_000;

/**
 * Seconds the model takes to embed the whole corpus on every thread, measured now on an evenly spread
 * sample (the time the cached embeddings took when they were computed says more about how busy the
 * machine was then than about the model).
 */
async function corpusEmbedSeconds(corpus: BenchCorpus): Promise<number> {
  const step = Math.max(1, Math.floor(corpus.docs.length / MODEL_SAMPLE));
  const sample = corpus.docs.filter((_, i) => i % step === 0).slice(0, MODEL_SAMPLE).map((doc) => doc.text.slice(0, 2000));
  const pool = createEmbeddingPool(BUNDLED_SPEC);
  try {
    await pool.embed(sample.slice(0, 8 * pool.threads));
    const [, ms] = await timed(() => pool.embed(sample));
    return (corpus.docs.length * ms) / sample.length / 1000;
  } finally {
    await pool.close();
  }
}

async function peers(queryEmbedMs: number) {
  const out: Record<string, PeerResult[]> = {};
  for (const size of values.sizes.split(",").map(Number)) {
    const corpus = await loadCorpus(size, queryCount, EVAL_DIR, CACHE_DIR, log);
    const embedSeconds = await corpusEmbedSeconds(corpus);
    log(`peers on ${size} objects (the model embeds them in ${embedSeconds.toFixed(0)} s on all threads, from ${Math.min(size, MODEL_SAMPLE)} of them now)…`);
    out[size] = runPeers(size, queryCount, CACHE_DIR, EVAL_DIR, { engines: peerNames, embedSeconds, queryEmbedMs }, log);
    if (!values.json) process.stdout.write(renderPeers(size, out[size] as PeerResult[]));
  }
  return out;
}

async function queryEmbeddingMs(): Promise<number> {
  const model = await loadModel(BUNDLED_SPEC);
  const queries = generateQueries(queryCount, 3);
  await model.embedTexts(queries.slice(0, 3));
  const [, ms] = await timed(() => model.embedTexts(queries));
  return ms / queries.length;
}

async function main() {
  const own = values["no-own"] ? null : await ownBench();
  const peerResults = values["no-peers"] ? null : await peers(await queryEmbeddingMs());
  if (values.json) process.stdout.write(JSON.stringify({ semsearch: own, peers: peerResults }, null, 2) + "\n");
}

async function ownBench() {
  const objects = generateObjects(objectCount);
  const queries = generateQueries(queryCount);
  const sample = objects.slice(0, 400).map((o) => `${o.title}\n${o.body}`);
  log(`model throughput on ${sample.length} objects…`);
  const model = await modelThroughput(sample);

  const dir = mkdtempSync(path.join(tmpdir(), "semsearch-bench-"));
  const project = path.join(dir, "project");
  const engine = new Engine({ projectDir: project });
  try {
    log(`storing ${objectCount} objects…`);
    const jsonl = objects.map((o) => JSON.stringify(o)).join("\n");
    const [, storeMs] = await timed(() => engine.addObjects([{ text: jsonl, source: "generated" }]));
    log("indexing in the background worker…");
    const [{ id }, buildMs] = await timed(async () => {
      const created = await engine.createIndex({ configuration: { index_type: { name: "text" } } });
      await engine.waitForIndex(created.id, { onProgress: (p) => process.stderr.write(`\r  ${p.done}/${p.total}`) });
      return created;
    });
    process.stderr.write("\n");

    // As the HTTP API and --json ask: no snippet text.
    await engine.search(id, { query: "warm up", snippets: false });
    const warm: number[] = [];
    for (const query of queries) warm.push((await timed(() => engine.search(id, { query, snippets: false })))[1]);

    const cold: number[] = [];
    for (const query of queries.slice(0, coldCount)) {
      const start = performance.now();
      const result = spawnSync(process.execPath, [BIN, "--project", project, "--json", "search", id, query], { encoding: "utf8" });
      if (result.status !== 0) throw new Error(`cold search failed: ${result.stderr}`);
      cold.push(performance.now() - start);
    }

    const ingest = objectCount / (buildMs / 1000);
    const report = {
      machine: { cores: defaultThreadCount(), node: process.version },
      objects: objectCount,
      model: {
        id: DEFAULT_MODEL,
        objects_per_s_one_thread: round(model.oneThread),
        objects_per_s_all_threads: round(model.allThreads),
        threads: model.threads,
      },
      ingest: {
        store_objects_per_s: round(objectCount / (storeMs / 1000)),
        index_objects_per_s: round(ingest),
        fraction_of_model_all_threads: round(ingest / model.allThreads),
        fraction_of_model_one_thread: round(ingest / model.oneThread),
      },
      search_ms: {
        warm_p50: round(percentile(warm, 50)),
        warm_p95: round(percentile(warm, 95)),
        cold_cli_p50: round(percentile(cold, 50)),
        cold_cli_p95: round(percentile(cold, 95)),
      },
    };
    if (!values.json) process.stdout.write(renderReport(report) + "\n");
    return report;
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

function renderReport(r: any): string {
  return [
    `semsearch bench — ${r.objects} generated objects, ${r.machine.cores} cores, Node ${r.machine.node}`,
    `  model alone (${r.model.id}): ${r.model.objects_per_s_one_thread} objects/s on 1 thread, ${r.model.objects_per_s_all_threads} on ${r.model.threads} threads`,
    `  store (objects add):        ${r.ingest.store_objects_per_s} objects/s`,
    `  index (create → READY):     ${r.ingest.index_objects_per_s} objects/s = ${Math.round(r.ingest.fraction_of_model_all_threads * 100)}% of the model on all threads (${Math.round(r.ingest.fraction_of_model_one_thread * 100)}% of one thread)`,
    `  search, warm (in process):  p50 ${r.search_ms.warm_p50} ms, p95 ${r.search_ms.warm_p95} ms`,
    `  search, cold (CLI process): p50 ${r.search_ms.cold_cli_p50} ms, p95 ${r.search_ms.cold_cli_p95} ms`,
    "",
  ].join("\n");
}

await main();
