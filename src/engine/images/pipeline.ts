/**
 * Images from reference to vector, in one thread: each reference is resolved against its directory,
 * fetched (local files, HTTP with the project's cache), decoded and preprocessed, then embedded by
 * the CLIP vision tower in small batches. What goes wrong with one image is that image's reason
 * (`HTTP 404`, `not an image (…)`); only a model that cannot run at all throws.
 */
import { MODEL_UNAVAILABLE } from "../embedding/model-cache.js";
import type { ClipPreprocessConfig, ImageEmbeddingProvider } from "../embedding/provider.js";
import { SemsearchError } from "../errors.js";
import { ImageDecodeError, preprocessImage } from "./decode.js";
import { Slots, type ImageFetcher } from "./fetch.js";
import { resolveImageReference } from "./reference.js";

/** An image reference as stored, with the directory a relative path is resolved against. */
export interface ImageRef {
  value: string;
  base: string;
}

/** An image's unit vector, or why it has none. */
export type ImageOutcome = Float32Array | string;

/** Images fetched and decoded at once per thread (sharp runs on libuv's threads), and images per vision-model call. */
const DECODE_CONCURRENCY = 4;
export const EMBED_BATCH = 8;

type Prepared = { ok: true; pixels: Float32Array } | { ok: false; reason: string };

/** A model that cannot be used at all blocks the index rather than failing its objects. */
export function modelUnavailable(error: unknown): boolean {
  return error instanceof SemsearchError && MODEL_UNAVAILABLE.has(error.code);
}

function describe(error: unknown): string {
  if (error instanceof ImageDecodeError) return error.reason;
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]?.slice(0, 300) ?? "unknown error";
}

export class ImagePipeline {
  constructor(
    private readonly fetcher: ImageFetcher,
    private readonly model: ImageEmbeddingProvider,
  ) {}

  /** Fetches and preprocesses one reference; never throws: what goes wrong is the image's reason. */
  private async prepare(ref: ImageRef, config: ClipPreprocessConfig): Promise<Prepared> {
    try {
      const resolved = resolveImageReference(ref.value, ref.base);
      if ("error" in resolved) return { ok: false, reason: resolved.error };
      const fetched = await this.fetcher.fetch(resolved);
      if (!fetched.ok) return { ok: false, reason: fetched.reason };
      return { ok: true, pixels: await preprocessImage(fetched.bytes, config, { quoteContent: resolved.kind === "http" }) };
    } catch (error) {
      return { ok: false, reason: describe(error) };
    }
  }

  /** Embeds preprocessed images (one by one if the batch fails, so a failing image gets its own reason). */
  private async embedBatch(pixels: readonly Float32Array[]): Promise<ImageOutcome[]> {
    if (pixels.length === 0) return [];
    try {
      return await this.model.embedImages(pixels);
    } catch (error) {
      if (modelUnavailable(error)) throw error;
    }
    const out: ImageOutcome[] = [];
    for (const image of pixels) {
      try {
        out.push((await this.model.embedImages([image]))[0] as Float32Array);
      } catch (single) {
        if (modelUnavailable(single)) throw single;
        out.push(`embedding failed: ${describe(single)}`);
      }
    }
    return out;
  }

  /** A vector or a reason for each reference, in order. */
  async run(refs: readonly ImageRef[]): Promise<ImageOutcome[]> {
    const config = await this.model.imageInput();
    const slots = new Slots(DECODE_CONCURRENCY);
    const pending = refs.map((ref) => slots.use(() => this.prepare(ref, config)));
    const out: ImageOutcome[] = new Array(refs.length);
    try {
      for (let start = 0; start < refs.length; start += EMBED_BATCH) {
        const prepared = await Promise.all(pending.slice(start, start + EMBED_BATCH));
        const ready = prepared.flatMap((item, i) => (item.ok ? [{ at: start + i, pixels: item.pixels }] : []));
        prepared.forEach((item, i) => {
          if (!item.ok) out[start + i] = item.reason;
        });
        const vectors = await this.embedBatch(ready.map((item) => item.pixels));
        ready.forEach((item, i) => (out[item.at] = vectors[i] as ImageOutcome));
      }
    } finally {
      // A model that cannot run leaves no fetch or decode running unobserved.
      await Promise.allSettled(pending);
    }
    return out;
  }
}
