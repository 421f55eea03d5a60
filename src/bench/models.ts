/**
 * `npm run bench:models`: the bundled model against a model of all-MiniLM-L6-v2's exact architecture
 * (BERT, vocabulary 30,522, hidden 384, 6 layers, 12 heads) with random weights, fp32 and q8.
 * Speed does not depend on weight values; the model is generated at bench time by
 * `fixtures/models/generate.py minilm` (needs a python3 with onnx and numpy, e.g. Debian's
 * python3-onnx and python3-numpy), with a WordPiece vocabulary of the most frequent words of the
 * SciFact corpus (read in place from ../shared/eval when present), so token counts are realistic.
 *
 * For each model, in a fresh process (so load time and peak RSS are its own): raw texts/s on 1
 * thread, on 2 threads as a pool of single-threaded copies (the bundled model's way) and, for ONNX,
 * as one session with 2 intra-op threads (the ONNX models' way); query embedding latency p50/p95. Then ingest through the real
 * worker (CLI `objects add`, `index create --model`, wait for READY) on the same generated objects.
 *
 *   npm run bench:models -- [--objects 10000] [--texts 2000] [--python /usr/bin/python3] [--json]
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createThreadPool } from "../engine/embedding/pool.js";
import { BUNDLED_SPEC, loadModel } from "../engine/embedding/registry.js";
import type { ModelSpec } from "../engine/embedding/model-spec.js";
import { resolveModelSpec } from "../engine/models.js";
import { generateObjects, generateQueries } from "./generate.js";
import { percentile } from "./stats.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CACHE = path.join(ROOT, ".cache", "bench", "models");
const BIN = path.join(ROOT, "bin", "semsearch");
const log = (message: string) => process.stderr.write(`${message}\n`);

const { values } = parseArgs({
  options: {
    objects: { type: "string", default: "10000" },
    texts: { type: "string", default: "2000" },
    python: { type: "string", default: "/usr/bin/python3" },
    json: { type: "boolean", default: false },
    measure: { type: "string" },
    kind: { type: "string" },
  },
});

interface RawResult {
  label: string;
  load_ms: number;
  texts: number;
  one_thread_per_s: number;
  two_threads_per_s: number;
  one_session_two_threads_per_s?: number;
  abstracts_one_thread_per_s?: number;
  query_p50_ms: number;
  query_p95_ms: number;
  peak_rss_mb: number;
}

function objectText(object: { title: string; body: string }): string {
  return `${object.title}\n${object.body}`;
}

/** SciFact abstracts, read in place, when the evaluation data is there. */
function scifactAbstracts(limit: number): string[] {
  const file = path.join(ROOT, "..", "shared", "eval", "scifact", "corpus.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .slice(0, limit)
    .map((line) => {
      const doc = JSON.parse(line) as { title: string; text: string };
      return `${doc.title}\n${doc.text}`;
    });
}

async function rate(texts: string[], embed: (texts: string[]) => Promise<unknown>): Promise<number> {
  await embed(texts.slice(0, 8));
  const started = performance.now();
  await embed(texts);
  return texts.length / ((performance.now() - started) / 1000);
}

/** Child process: measures one model. */
async function measure(spec: ModelSpec, label: string, count: number): Promise<RawResult> {
  const texts = generateObjects(count, 99).map(objectText);
  const started = performance.now();
  const single = await loadModel(spec, 1);
  await single.embedTexts(["warm up"]);
  const loadMs = performance.now() - started;
  const oneThread = await rate(texts, (t) => single.embedTexts(t));
  const abstracts = scifactAbstracts(Math.max(50, Math.round(count / 8)));
  const abstractsRate = abstracts.length ? await rate(abstracts, (t) => single.embedTexts(t)) : undefined;
  const pool = createThreadPool(spec, 2);
  const twoThreads = await rate(texts, (t) => pool.embed(t));
  await pool.close();
  const wide = await loadModel(spec, 2);
  const oneSession = await rate(texts, (t) => wide.embedTexts(t));
  const latencies: number[] = [];
  for (const query of generateQueries(200, 5)) {
    const t0 = performance.now();
    await single.embedTexts([query], "query");
    latencies.push(performance.now() - t0);
  }
  return {
    label,
    load_ms: Math.round(loadMs),
    texts: texts.length,
    one_thread_per_s: oneThread,
    two_threads_per_s: twoThreads,
    one_session_two_threads_per_s: oneSession,
    ...(abstractsRate === undefined ? {} : { abstracts_one_thread_per_s: abstractsRate }),
    query_p50_ms: percentile(latencies, 50),
    query_p95_ms: percentile(latencies, 95),
    peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
  };
}

/** Generates the MiniLM-shaped random model once (cached under .cache/bench/models). */
function minilmFolder(): string {
  const out = path.join(CACHE, "minilm-random");
  if (existsSync(path.join(out, "onnx", "model_quantized.onnx"))) return out;
  mkdirSync(CACHE, { recursive: true });
  const words = path.join(CACHE, "vocab-words.txt");
  const counts = new Map<string, number>();
  const corpus = [...scifactAbstracts(6000), ...generateObjects(20000, 1).map(objectText)];
  for (const text of corpus) for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) counts.set(word, (counts.get(word) ?? 0) + 1);
  writeFileSync(words, [...counts].sort((a, b) => b[1] - a[1]).map(([word]) => word).join("\n") + "\n");
  log(`generating the MiniLM-shaped random model (${counts.size} corpus words) …`);
  const run = spawnSync(values.python, [path.join(ROOT, "fixtures", "models", "generate.py"), "minilm", "--out", out, "--vocab-words", words], { stdio: ["ignore", process.stderr, process.stderr] });
  if (run.status !== 0) throw new Error(`the generator failed (exit ${run.status}); it needs ${values.python} with onnx and numpy (Debian: apt install python3-onnx python3-numpy)`);
  return out;
}

function childMeasure(kind: string, count: number): RawResult {
  const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), "--measure", kind, "--texts", String(count)], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 26 });
  return JSON.parse(out) as RawResult;
}

function cli(project: string, args: string[], input?: string): string {
  return execFileSync(process.execPath, [BIN, "--project", project, "--json", ...args], { input, encoding: "utf8", maxBuffer: 1 << 30, env: { ...process.env } });
}

/** Ingest through the real CLI and background worker: objects/s from index create to READY, and the worker's peak RSS. */
function ingest(label: string, model: string, dtype: string | undefined, file: string, count: number): { label: string; objects_per_s: number; seconds: number; worker_peak_rss_mb: number } {
  const project = path.join(CACHE, `ingest-${label.replace(/[^a-z0-9]+/gi, "-")}`);
  rmSync(project, { recursive: true, force: true });
  cli(project, ["objects", "add", file]);
  log(`ingest ${label}: ${count} objects …`);
  const started = Date.now();
  const { id } = JSON.parse(cli(project, ["index", "create", "--model", model, ...(dtype ? ["--model-dtype", dtype] : []), "--searchable", "title,body"])) as { id: string };
  cli(project, ["index", "status", id, "--wait"]);
  const seconds = (Date.now() - started) / 1000;
  // The worker logs its peak RSS when it exits (after optimizing, once idle).
  for (let i = 0; i < 600 && (JSON.parse(cli(project, ["worker", "status"])) as { running: boolean }).running; i++) spawnSync("sleep", ["1"]);
  const peaks = [...readFileSync(path.join(project, "worker.log"), "utf8").matchAll(/peak RSS (\d+) MB/g)].map((m) => Number(m[1]));
  return { label, objects_per_s: count / seconds, seconds, worker_peak_rss_mb: Math.max(0, ...peaks) };
}

async function main(): Promise<void> {
  if (values.measure) {
    const kind = values.measure;
    const count = Number(values.texts);
    const spec = kind === "use" ? BUNDLED_SPEC : await resolveModelSpec(minilmFolder(), { dtype: kind === "q8" ? "q8" : "fp32" });
    // The bundled model is about 10× slower: fewer texts keep its run short.
    const result = await measure(spec, kind, kind === "use" ? Math.max(100, Math.round(count / 5)) : count);
    process.stdout.write(JSON.stringify(result) + "\n");
    return;
  }
  const count = Number(values.objects);
  const folder = minilmFolder();
  const raw = ["use", "fp32", "q8"].map((kind) => {
    log(`raw speed: ${kind} …`);
    return childMeasure(kind, Number(values.texts));
  });
  const file = path.join(CACHE, `objects-${count}.jsonl`);
  if (!existsSync(file)) writeFileSync(file, generateObjects(count, 1234).map((o) => JSON.stringify(o)).join("\n") + "\n");
  const ingests = [ingest("use", "use", undefined, file, count), ingest("minilm-fp32", folder, "fp32", file, count), ingest("minilm-q8", folder, "q8", file, count)];
  const useIngest = ingests[0]?.objects_per_s ?? Number.NaN;
  const useQuery = raw[0]?.query_p50_ms ?? Number.NaN;
  const report = {
    machine: { cores: (await import("node:os")).availableParallelism(), node: process.version },
    objects: count,
    raw,
    ingest: ingests.map((entry) => ({ ...entry, ratio_to_use: entry.objects_per_s / useIngest })),
    query_ratio_to_use: raw.map((entry) => ({ label: entry.label, ratio: entry.query_p50_ms / useQuery })),
  };
  mkdirSync(path.join(ROOT, "bench", "results"), { recursive: true });
  writeFileSync(path.join(ROOT, "bench", "results", "models.json"), JSON.stringify(report, null, 2) + "\n");
  if (values.json) {
    process.stdout.write(JSON.stringify(report, null, 2) + "\n");
    return;
  }
  const f = (n: number | undefined, d = 1) => (n === undefined ? "–" : n.toFixed(d));
  const lines = [
    "model        load ms  texts/s 1 thr  2 thr (pool)  2 thr (1 session)  abstracts/s 1 thr  query p50/p95 ms  peak RSS MB",
    ...raw.map((r) => `${r.label.padEnd(12)} ${String(r.load_ms).padStart(7)}  ${f(r.one_thread_per_s).padStart(13)}  ${f(r.two_threads_per_s).padStart(12)}  ${f(r.one_session_two_threads_per_s).padStart(17)}  ${f(r.abstracts_one_thread_per_s).padStart(17)}  ${`${f(r.query_p50_ms, 2)} / ${f(r.query_p95_ms, 2)}`.padStart(16)}  ${String(r.peak_rss_mb).padStart(11)}`),
    "",
    "ingest (worker)  objects/s  seconds  × USE  worker peak RSS MB",
    ...report.ingest.map((r) => `${r.label.padEnd(16)} ${f(r.objects_per_s).padStart(9)}  ${f(r.seconds, 0).padStart(7)}  ${f(r.ratio_to_use, 2).padStart(5)}  ${String(r.worker_peak_rss_mb).padStart(18)}`),
  ];
  process.stdout.write(lines.join("\n") + "\n");
}

await main();
