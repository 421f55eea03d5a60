/**
 * The image half of the worker: for each object of a batch, its image references are resolved,
 * fetched (local files, HTTP with a cache), decoded and preprocessed, and embedded by the index's
 * CLIP vision tower. An image that cannot be had puts its object in ERROR with a reason a person
 * understands (`image "https://…/a.jpg": HTTP 404`); the rest of the batch goes on.
 */
import { MODEL_UNAVAILABLE } from "../embedding/model-cache.js";
import { SemsearchError } from "../errors.js";
import { ImageDecodeError, preprocessImage } from "../images/decode.js";
import type { ImageFetcher } from "../images/fetch.js";
import { displayReference, resolveImageReference } from "../images/reference.js";
import type { ClipPreprocessConfig, ImageEmbeddingProvider } from "../embedding/provider.js";
import type { ImageValue } from "./extract.js";

/** Images preprocessed at once (sharp decodes on libuv's threads), and images per vision-model call. */
const DECODE_CONCURRENCY = 8;
const EMBED_BATCH = 8;

export interface ObjectImages {
  id: string;
  /** The directory relative paths are resolved against. */
  base: string;
  images: readonly ImageValue[];
}

export interface EmbeddedImages {
  /** object id → one unit vector per image, in the object's image order */
  vectors: Map<string, Float32Array[]>;
  /** object id → why it cannot be indexed (the first image that failed) */
  errors: Map<string, string>;
}

/** Runs `task` over `items` with at most `limit` running at once, results in order. */
async function mapLimited<T, R>(items: readonly T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const run = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await task(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, run));
  return out;
}

type Prepared = { ok: true; pixels: Float32Array } | { ok: false; reason: string };

/** A model that cannot be used at all blocks the index rather than failing its objects. */
function modelUnavailable(error: unknown): boolean {
  return error instanceof SemsearchError && MODEL_UNAVAILABLE.has(error.code);
}

function describe(error: unknown): string {
  if (error instanceof ImageDecodeError) return error.reason;
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]?.slice(0, 300) ?? "unknown error";
}

export class ImageEmbedder {
  constructor(
    private readonly fetcher: ImageFetcher,
    private readonly model: ImageEmbeddingProvider,
    private readonly log: (message: string) => void = () => {},
  ) {}

  /** Fetches and preprocesses one reference (as stored) relative to `base`. */
  private async prepare(value: string, base: string, config: ClipPreprocessConfig): Promise<Prepared> {
    const ref = resolveImageReference(value, base);
    if ("error" in ref) return { ok: false, reason: ref.error };
    const fetched = await this.fetcher.fetch(ref);
    if (!fetched.ok) return { ok: false, reason: fetched.reason };
    try {
      return { ok: true, pixels: await preprocessImage(fetched.bytes, config) };
    } catch (error) {
      return { ok: false, reason: describe(error) };
    }
  }

  async embed(objects: readonly ObjectImages[]): Promise<EmbeddedImages> {
    const vectors = new Map<string, Float32Array[]>();
    const errors = new Map<string, string>();
    const config = await this.model.imageInput();
    // The same reference in several objects of a batch is fetched and embedded once.
    const keyOf = (value: string, base: string) => JSON.stringify([base, value]);
    const unique = new Map<string, { value: string; base: string }>();
    for (const object of objects) for (const image of object.images) unique.set(keyOf(image.value, object.base), { value: image.value, base: object.base });
    const keys = [...unique.keys()];
    const prepared = new Map<string, Prepared>();
    const results = await mapLimited(keys, DECODE_CONCURRENCY, (key) => {
      const { value, base } = unique.get(key) as { value: string; base: string };
      return this.prepare(value, base, config);
    });
    keys.forEach((key, i) => prepared.set(key, results[i] as Prepared));

    const good = keys.filter((key) => (prepared.get(key) as Prepared).ok);
    const embedded = new Map<string, Float32Array | string>();
    for (let start = 0; start < good.length; start += EMBED_BATCH) {
      const chunk = good.slice(start, start + EMBED_BATCH);
      const pixels = chunk.map((key) => (prepared.get(key) as { pixels: Float32Array }).pixels);
      try {
        const out = await this.model.embedImages(pixels);
        chunk.forEach((key, i) => embedded.set(key, out[i] as Float32Array));
      } catch (error) {
        if (modelUnavailable(error)) throw error;
        this.log(`embedding ${chunk.length} images failed (${describe(error)}); embedding them one by one`);
        for (const [i, key] of chunk.entries()) {
          try {
            embedded.set(key, (await this.model.embedImages([pixels[i] as Float32Array]))[0] as Float32Array);
          } catch (single) {
            if (modelUnavailable(single)) throw single;
            embedded.set(key, `embedding failed: ${describe(single)}`);
          }
        }
      }
    }

    for (const object of objects) {
      const out: Float32Array[] = [];
      for (const image of object.images) {
        const key = keyOf(image.value, object.base);
        const state = prepared.get(key) as Prepared;
        const vector = embedded.get(key);
        const reason = !state.ok ? state.reason : typeof vector === "string" ? vector : vector === undefined ? "not embedded" : null;
        if (reason !== null) {
          errors.set(object.id, `image ${JSON.stringify(displayReference(image.value))}: ${reason}`);
          break;
        }
        out.push(vector as Float32Array);
      }
      if (!errors.has(object.id)) vectors.set(object.id, out);
    }
    return { vectors, errors };
  }
}
