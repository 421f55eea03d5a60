/**
 * `npm run bench:images`: what an image index costs, stage by stage, with a model of CLIP ViT-B/32's
 * exact architecture and random weights (speed does not depend on weight values), generated once by
 * `fixtures/models/generate.py clip-b32` (needs a python3 with onnx and numpy) into .cache/bench/models.
 * The photos are generated too (images-data.ts): N distinct 640×427 JPEGs that compress like photos.
 *
 * Each stage runs in a fresh child process (this file with `--measure <stage>`, images-measure.ts):
 *  1. fetch: ImageFetcher over local paths, and over HTTP from a local server (no cache; a cache's
 *     first pass; its second pass, answered with 304s);
 *  2. decode + preprocess (224 px) of bytes in memory, one at a time and 8 in flight, and the real
 *     COCO photos of ../shared/eval (read in place) as a check;
 *  3. the vision tower alone on preprocessed pixels (fp32, q8; 1 and 2 onnxruntime threads) and the
 *     text tower's query latency;
 *  4. end to end through the CLI and the background worker (`index create --type image`, q8) with
 *     SEMSEARCH_THREADS=1 and 2: images/s of the build, the worker's peak RSS, search latency;
 *  5. the same objects' captions into a text index with the bundled model, for the ratio.
 *
 *   npm run bench:images -- [--images 1000] [--vision-images 128] [--fp32-images 64] [--skip-e2e] [--python /usr/bin/python3] [--json]
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { ModelSpec } from "../engine/embedding/model-spec.js";
import { resolveModelSpec } from "../engine/models.js";
import { cocoPhotos, ensurePhotos, meanKb, peakRssMb, servePhotos, writeObjects } from "./images-data.js";
import { measureDecode, measureFetch, measureSearch, measureVision, type DecodeFigures, type FetchFigures, type SearchFigures, type VisionFigures } from "./images-measure.js";
import { renderReport, type IngestFigures, type Report } from "./images-report.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BENCH = path.join(ROOT, ".cache", "bench");
const WORK = path.join(BENCH, "images-work");
const BIN = path.join(ROOT, "bin", "semsearch");
const log = (message: string) => process.stderr.write(`${message}\n`);

const { values } = parseArgs({
  options: {
    images: { type: "string", default: "1000" },
    "vision-images": { type: "string", default: "128" },
    "fp32-images": { type: "string", default: "64" },
    "skip-e2e": { type: "boolean", default: false },
    python: { type: "string", default: "/usr/bin/python3" },
    json: { type: "boolean", default: false },
    measure: { type: "string" },
    spec: { type: "string" },
    threads: { type: "string" },
    queries: { type: "string" },
    url: { type: "string" },
    project: { type: "string" },
    index: { type: "string" },
  },
});
const count = Number(values.images);
const photoFiles = () => ensurePhotos(path.join(BENCH, "images"), count, log);

/** The ViT-B/32-shaped random CLIP, generated once. */
function clipFolder(): string {
  const out = path.join(BENCH, "models", "clip-vit-b32-random");
  if (existsSync(path.join(out, "onnx", "vision_model_quantized.onnx")) && existsSync(path.join(out, "onnx", "text_model.onnx"))) return out;
  log("generating the ViT-B/32-shaped random CLIP (about 10 s, 2 GB) …");
  const run = spawnSync(values.python, [path.join(ROOT, "fixtures", "models", "generate.py"), "clip-b32", out], { stdio: ["ignore", process.stderr, process.stderr] });
  if (run.status !== 0) throw new Error(`the generator failed (exit ${run.status}); it needs ${values.python} with onnx and numpy (Debian: apt install python3-onnx python3-numpy)`);
  return out;
}

/** Child side: one stage, its figures as JSON on stdout. */
async function measureStage(stage: string): Promise<unknown> {
  const files = await photoFiles();
  if (stage === "fetch") return measureFetch(files, values.url as string, path.join(WORK, "fetch-cache"));
  if (stage === "decode") return measureDecode(files, cocoPhotos(ROOT));
  if (stage === "vision") {
    const spec = JSON.parse(readFileSync(values.spec as string, "utf8")) as ModelSpec;
    return measureVision(spec, Number(values.threads), files, Number(values.queries ?? 0));
  }
  if (stage === "search") return measureSearch(values.project as string, values.index as string, 50);
  throw new Error(`unknown stage ${stage}`);
}

function child<T>(stage: string, args: string[] = []): T {
  const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), "--measure", stage, "--images", String(count), ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 26 });
  return JSON.parse(out) as T;
}

/** A child run without blocking this process, whose HTTP server answers it meanwhile. */
function childAsync<T>(stage: string, args: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [fileURLToPath(import.meta.url), "--measure", stage, "--images", String(count), ...args], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    proc.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    proc.on("error", reject);
    proc.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out) as T) : reject(new Error(`the ${stage} stage failed (exit ${code})`))));
  });
}

function cli(project: string, args: string[], env: NodeJS.ProcessEnv): string {
  return execFileSync(process.execPath, [BIN, "--project", project, "--json", ...args], { encoding: "utf8", maxBuffer: 1 << 30, env, stdio: ["ignore", "pipe", "inherit"] });
}

function workerPidOf(project: string): number | null {
  try {
    return (JSON.parse(readFileSync(path.join(project, "worker.json"), "utf8")) as { pid: number }).pid;
  } catch {
    return null;
  }
}

const alive = (pid: number) => existsSync(`/proc/${pid}`);

/**
 * Times `index status <id> --wait` (the build, from the moment `index create` returned), polling
 * the worker's VmHWM meanwhile; then waits for the worker to exit so the next stage runs alone.
 */
async function timedBuild(project: string, id: string, env: NodeJS.ProcessEnv): Promise<{ seconds: number; peak: number; exitCode: number | null }> {
  const started = performance.now();
  let [peak, pid] = [0, null as number | null];
  const poll = setInterval(() => {
    pid = workerPidOf(project) ?? pid;
    const seen = pid === null ? null : peakRssMb(pid);
    if (seen !== null) peak = Math.max(peak, seen);
  }, 100);
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    const proc = spawn(process.execPath, [BIN, "--project", project, "--json", "index", "status", id, "--wait"], { env, stdio: ["ignore", "ignore", "inherit"] });
    proc.on("error", reject);
    proc.on("exit", resolve);
  });
  const seconds = (performance.now() - started) / 1000;
  clearInterval(poll);
  for (let i = 0; i < 600 && pid !== null && alive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  return { seconds, peak, exitCode };
}

/** A fresh project with the bench objects, an index created with `createArgs`, built and timed. */
async function ingest(label: string, objectsFile: string, createArgs: string[], threads: number, search: boolean): Promise<IngestFigures> {
  const project = path.join(WORK, `project-${label}`);
  rmSync(project, { recursive: true, force: true });
  const env = { ...process.env, SEMSEARCH_THREADS: String(threads), NO_COLOR: "1" };
  cli(project, ["objects", "add", objectsFile], env);
  log(`end to end ${label}: ${count} objects, SEMSEARCH_THREADS=${threads} …`);
  const { id } = JSON.parse(cli(project, ["index", "create", ...createArgs], env).split("\n")[0] as string) as { id: string };
  const build = await timedBuild(project, id, env);
  const status = (JSON.parse(cli(project, ["index", "status", id], env)) as { status: Record<string, number> }).status;
  const logged = [...readFileSync(path.join(project, "worker.log"), "utf8").matchAll(/peak RSS (\d+) MB/g)].map((m) => Number(m[1]));
  if (build.exitCode !== 0 || status.READY !== count) log(`  ${label}: --wait exited ${build.exitCode}, status ${JSON.stringify(status)}`);
  const figures: IngestFigures = { label, threads, per_s: count / build.seconds, seconds: build.seconds, ready: status.READY ?? 0, worker_peak_rss_mb: build.peak, worker_logged_peak_rss_mb: Math.max(0, ...logged) };
  if (search) figures.search = child<SearchFigures>("search", ["--project", project, "--index", id]);
  return figures;
}

async function specFile(folder: string, dtype: "q8" | "fp32"): Promise<string> {
  const file = path.join(WORK, `spec-${dtype}.json`);
  writeFileSync(file, JSON.stringify(await resolveModelSpec(folder, { dtype })));
  return file;
}

async function main(): Promise<void> {
  if (values.measure) {
    process.stdout.write(JSON.stringify(await measureStage(values.measure)) + "\n");
    return;
  }
  mkdirSync(WORK, { recursive: true });
  const files = await photoFiles();
  const folder = clipFolder();
  const started = performance.now();

  log(`fetch: ${count} photos, local and over HTTP …`);
  const server = await servePhotos(path.join(BENCH, "images"));
  const fetch = await childAsync<FetchFigures>("fetch", ["--url", server.url]).finally(() => server.close());

  log("decode + preprocess …");
  const decode = child<DecodeFigures>("decode");

  const vision: VisionFigures[] = [];
  for (const dtype of ["q8", "fp32"] as const) {
    const spec = await specFile(folder, dtype);
    const images = Math.min(count, Number(values[dtype === "q8" ? "vision-images" : "fp32-images"]));
    for (const threads of [1, 2]) {
      log(`vision tower ${dtype}, ${threads} thread(s), ${images} images …`);
      vision.push(child<VisionFigures>("vision", ["--spec", spec, "--threads", String(threads), "--images", String(images), "--queries", threads === 1 ? "100" : "0"]));
    }
  }

  const ingests: IngestFigures[] = [];
  if (!values["skip-e2e"]) {
    const objectsFile = path.join(WORK, `objects-${count}.jsonl`);
    writeObjects(objectsFile, files);
    for (const threads of [1, 2]) ingests.push(await ingest(`image-q8-t${threads}`, objectsFile, ["--type", "image", "--model", folder], threads, true));
    ingests.push(await ingest("text-use-t2", objectsFile, ["--searchable", "caption"], 2, false));
  }

  const report: Report = {
    machine: { cores: availableParallelism(), node: process.version },
    images: count,
    photo_kb: meanKb(files),
    coco_kb: cocoPhotos(ROOT).length ? meanKb(cocoPhotos(ROOT)) : undefined,
    fetch,
    decode,
    vision,
    ingest: ingests,
    seconds: (performance.now() - started) / 1000,
  };
  mkdirSync(path.join(ROOT, "bench", "results"), { recursive: true });
  writeFileSync(path.join(ROOT, "bench", "results", "images.json"), JSON.stringify(report, null, 2) + "\n");
  process.stdout.write(values.json ? JSON.stringify(report, null, 2) + "\n" : renderReport(report));
}

await main();
