/**
 * What decoding costs: `preprocessImage` throughput over image files, one image at a time on one
 * JavaScript thread (files are read into memory first, so disk time is not counted). libvips may
 * still use several threads per image; `--threads` sets how many (sharp's concurrency).
 *
 *   node dist/bench/images-decode.js [--config preprocessor_config.json] [--threads N] [--rounds 3] DIR_OR_FILE...
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { parsePreprocessorConfig, preprocessImage, setDecodeThreads, type ClipPreprocessConfig } from "../engine/images/decode.js";

export interface BenchDecodeOptions {
  /** libvips threads per image (sharp's concurrency); default: sharp's own default, the number of cores. */
  threads?: number;
  /** Passes over the files; the best one counts. Default 3. */
  rounds?: number;
}

/** CLIP ViT-B/32's preprocessing (Xenova/clip-vit-base-patch32 `preprocessor_config.json`). */
export const CLIP_VIT_B32_PREPROCESSOR = {
  crop_size: { height: 224, width: 224 },
  do_center_crop: true,
  do_convert_rgb: true,
  do_normalize: true,
  do_rescale: true,
  do_resize: true,
  image_mean: [0.48145466, 0.4578275, 0.40821073],
  image_std: [0.26862954, 0.26130258, 0.27577711],
  resample: 3,
  rescale_factor: 0.00392156862745098,
  size: { shortest_edge: 224 },
};

export interface BenchDecodeResult {
  /** Images per second of wall-clock time (the best round). */
  imagesPerSecond: number;
  /** Images per second of the process's CPU time (all threads): steadier than wall-clock time on a busy machine. */
  imagesPerCpuSecond: number;
  /** libvips threads per image during the run. */
  threads: number;
}

/** `preprocessImage` throughput over `files`, after one warm-up image. */
export async function benchDecode(files: string[], config: ClipPreprocessConfig, options: BenchDecodeOptions = {}): Promise<BenchDecodeResult> {
  if (files.length === 0) throw new Error("no image files to decode");
  const threads = await setDecodeThreads(options.threads);
  const images = files.map((file) => readFileSync(file));
  await preprocessImage(images[0] as Buffer, config);
  let best = Infinity;
  let bestCpu = Infinity;
  for (let round = 0; round < (options.rounds ?? 3); round++) {
    const start = performance.now();
    const cpu = process.cpuUsage();
    for (const image of images) await preprocessImage(image, config);
    const used = process.cpuUsage(cpu);
    best = Math.min(best, performance.now() - start);
    bestCpu = Math.min(bestCpu, (used.user + used.system) / 1000);
  }
  const perSecond = (ms: number) => Math.round((images.length / (ms / 1000)) * 10) / 10;
  return { imagesPerSecond: perSecond(best), imagesPerCpuSecond: perSecond(bestCpu), threads };
}

/** The image files named, or found (not recursively) in the folders named. */
function imageFiles(paths: string[]): string[] {
  return paths.flatMap((p) =>
    statSync(p).isDirectory()
      ? readdirSync(p)
          .filter((name) => /\.(jpe?g|png|webp|gif|tiff?|avif)$/i.test(name))
          .sort()
          .map((name) => path.join(p, name))
      : [p],
  );
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { config: { type: "string" }, threads: { type: "string" }, rounds: { type: "string", default: "3" } },
  });
  const config = parsePreprocessorConfig(values.config ? JSON.parse(readFileSync(values.config, "utf8")) : CLIP_VIT_B32_PREPROCESSOR);
  const files = imageFiles(positionals);
  const result = await benchDecode(files, config, { threads: values.threads ? Number(values.threads) : undefined, rounds: Number(values.rounds) });
  console.log(JSON.stringify({ images: files.length, size: `${config.width}x${config.height}`, ...result }));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
