/**
 * The measurements of `npm run bench:images` that run in a fresh child process each (images.ts
 * re-invokes itself with `--measure <stage>`), so load times and peak RSS are the stage's own.
 */
import { readFileSync, rmSync } from "node:fs";
import { embedsImages } from "../engine/embedding/provider.js";
import type { ModelSpec } from "../engine/embedding/model-spec.js";
import { loadModel } from "../engine/embedding/registry.js";
import { parsePreprocessorConfig, preprocessImage, setDecodeThreads } from "../engine/images/decode.js";
import { defaultFetchOptions, ImageFetcher, type FetchResult } from "../engine/images/fetch.js";
import type { ImageReference } from "../engine/images/reference.js";
import { Engine } from "../engine/index.js";
import { generateObjects, generateQueries } from "./generate.js";
import { benchDecode, CLIP_VIT_B32_PREPROCESSOR } from "./images-decode.js";
import { mapLimited } from "./images-data.js";
import { percentile } from "./stats.js";

/** Images in flight in the worker's fetch + decode step (indexing/images.ts DECODE_CONCURRENCY). */
const IN_FLIGHT = 8;
/** Images per vision-model call in the worker (indexing/images.ts EMBED_BATCH). */
const EMBED_BATCH = 8;

const perSecond = (count: number, ms: number) => count / (ms / 1000);
const peakRss = () => Math.round(process.resourceUsage().maxRSS / 1024);

export interface FetchFigures {
  local_per_s: number;
  http_cold_per_s: number;
  http_cache_first_per_s: number;
  http_cache_revalidate_per_s: number;
  /** of the revalidation pass: answers taken from the cache (304s) */
  revalidated_from_cache: number;
}

/** One pass of a fresh fetcher over `refs`, `IN_FLIGHT` at a time; images/s, and every result checked. */
async function fetchPass(refs: readonly ImageReference[], cacheDir: string | null): Promise<{ rate: number; fromCache: number }> {
  const fetcher = new ImageFetcher(defaultFetchOptions(cacheDir));
  try {
    const started = performance.now();
    const results: FetchResult[] = await mapLimited(refs, IN_FLIGHT, (ref) => fetcher.fetch(ref));
    const rate = perSecond(refs.length, performance.now() - started);
    const failed = results.find((result) => !result.ok);
    if (failed && !failed.ok) throw new Error(`a fetch failed: ${failed.reason}`);
    return { rate, fromCache: results.filter((result) => result.ok && result.fromCache).length };
  } finally {
    fetcher.close();
  }
}

/** Fetch rates: local paths, then HTTP from `baseUrl` without a cache, and with `cacheDir` (cold, then 304s). */
export async function measureFetch(files: readonly string[], baseUrl: string, cacheDir: string): Promise<FetchFigures> {
  const urls = files.map((file): ImageReference => ({ kind: "http", url: new URL(encodeURIComponent(file.split("/").pop() as string), baseUrl).href }));
  const local = await fetchPass(files.map((file): ImageReference => ({ kind: "file", path: file })), null);
  const cold = await fetchPass(urls, null);
  rmSync(cacheDir, { recursive: true, force: true });
  const first = await fetchPass(urls, cacheDir);
  const second = await fetchPass(urls, cacheDir);
  rmSync(cacheDir, { recursive: true, force: true });
  return {
    local_per_s: local.rate,
    http_cold_per_s: cold.rate,
    http_cache_first_per_s: first.rate,
    http_cache_revalidate_per_s: second.rate,
    revalidated_from_cache: second.fromCache,
  };
}

export interface DecodeFigures {
  images: number;
  sharp_threads: number;
  one_per_s: number;
  one_per_cpu_s: number;
  in_flight_per_s: number;
  coco?: { images: number; one_per_s: number; in_flight_per_s: number };
}

/** preprocessImage over bytes already in memory, `IN_FLIGHT` at a time, after one warm-up image. */
async function decodeInFlight(files: readonly string[]): Promise<number> {
  const config = parsePreprocessorConfig(CLIP_VIT_B32_PREPROCESSOR);
  const images = files.map((file) => readFileSync(file));
  await preprocessImage(images[0] as Buffer, config);
  const started = performance.now();
  await mapLimited(images, IN_FLIGHT, (image) => preprocessImage(image, config));
  return perSecond(images.length, performance.now() - started);
}

/** Decode + preprocess throughput with ViT-B/32's 224 px config, one at a time and `IN_FLIGHT` at a time. */
export async function measureDecode(files: readonly string[], coco: readonly string[]): Promise<DecodeFigures> {
  const config = parsePreprocessorConfig(CLIP_VIT_B32_PREPROCESSOR);
  // sharp's default libvips threads, as the worker runs it (it sets none)
  const sharpThreads = await setDecodeThreads();
  const one = await benchDecode([...files], config, { rounds: 1 });
  const inFlight = await decodeInFlight(files);
  const figures: DecodeFigures = { images: files.length, sharp_threads: sharpThreads, one_per_s: one.imagesPerSecond, one_per_cpu_s: one.imagesPerCpuSecond, in_flight_per_s: inFlight };
  if (coco.length) {
    const real = await benchDecode([...coco], config, { rounds: 3 });
    figures.coco = { images: coco.length, one_per_s: real.imagesPerSecond, in_flight_per_s: await decodeInFlight(coco) };
  }
  return figures;
}

export interface VisionFigures {
  label: string;
  images: number;
  /** loadModel: tokenizer and text tower */
  load_ms: number;
  /** the vision tower's load (imageInput) */
  vision_load_ms: number;
  images_per_s: number;
  /** per second of the process's CPU time (all threads, spinning included): steadier on a busy machine */
  images_per_cpu_s: number;
  query_p50_ms?: number;
  query_p95_ms?: number;
  peak_rss_mb: number;
}

/** The vision tower alone on preprocessed pixels, in batches of EMBED_BATCH; with `queries`, text-tower query latency too. */
export async function measureVision(spec: ModelSpec, threads: number, files: readonly string[], queries: number): Promise<VisionFigures> {
  const config = parsePreprocessorConfig(CLIP_VIT_B32_PREPROCESSOR);
  const pixels = await mapLimited(files, IN_FLIGHT, (file) => preprocessImage(readFileSync(file), config));
  const t0 = performance.now();
  const model = await loadModel(spec, threads);
  const t1 = performance.now();
  if (!embedsImages(model)) throw new Error(`${spec.id} does not embed images`);
  await model.imageInput();
  const t2 = performance.now();
  await model.embedImages(pixels.slice(0, EMBED_BATCH));
  const started = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < pixels.length; i += EMBED_BATCH) await model.embedImages(pixels.slice(i, i + EMBED_BATCH));
  const used = process.cpuUsage(cpu);
  const figures: VisionFigures = {
    label: `${spec.dtype ?? "fp32"} ${threads} thr`,
    images: pixels.length,
    load_ms: Math.round(t1 - t0),
    vision_load_ms: Math.round(t2 - t1),
    images_per_s: perSecond(pixels.length, performance.now() - started),
    images_per_cpu_s: perSecond(pixels.length, (used.user + used.system) / 1000),
    peak_rss_mb: 0,
  };
  if (queries > 0) {
    const captions = generateObjects(queries + 1, 5).map((object) => object.title);
    await model.embedTexts([captions.pop() as string], "query");
    const latencies: number[] = [];
    for (const caption of captions) {
      const t = performance.now();
      await model.embedTexts([caption], "query");
      latencies.push(performance.now() - t);
    }
    figures.query_p50_ms = percentile(latencies, 50);
    figures.query_p95_ms = percentile(latencies, 95);
  }
  figures.peak_rss_mb = peakRss();
  return figures;
}

export interface SearchFigures {
  hybrid_p50_ms: number;
  hybrid_p95_ms: number;
  vector_p50_ms: number;
  vector_p95_ms: number;
  /** hits of the last hybrid query, a sanity check */
  hits: number;
}

/** `count` searches per mode through the engine, warm (after one unmeasured query per mode). */
export async function measureSearch(projectDir: string, indexId: string, count: number): Promise<SearchFigures> {
  const engine = new Engine({ projectDir });
  try {
    const queries = generateQueries(count + 1, 11);
    const latency = async (mode: string) => {
      await engine.search(indexId, { query: queries[count] as string, mode });
      const times: number[] = [];
      let hits = 0;
      for (const query of queries.slice(0, count)) {
        const t = performance.now();
        hits = (await engine.search(indexId, { query, mode })).hits.length;
        times.push(performance.now() - t);
      }
      return { p50: percentile(times, 50), p95: percentile(times, 95), hits };
    };
    const hybrid = await latency("hybrid");
    const vector = await latency("vector");
    return { hybrid_p50_ms: hybrid.p50, hybrid_p95_ms: hybrid.p95, vector_p50_ms: vector.p50, vector_p95_ms: vector.p95, hits: hybrid.hits };
  } finally {
    await engine.close();
  }
}
