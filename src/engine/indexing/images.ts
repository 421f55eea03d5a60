/**
 * The image half of the worker: for each object of a batch, its image references are resolved,
 * fetched (local files, HTTP with a cache), decoded and preprocessed, and embedded by the index's
 * CLIP vision tower. An image that cannot be had puts its object in ERROR with a reason a person
 * understands (`image "https://…/a.jpg": HTTP 404`); the rest of the batch goes on.
 */
import { MODEL_UNAVAILABLE } from "../embedding/model-cache.js";
import { SemsearchError } from "../errors.js";
import { ImageDecodeError, preprocessImage } from "../images/decode.js";
import { Slots, type ImageFetcher } from "../images/fetch.js";
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

  /** Fetches and preprocesses one reference (as stored) relative to `base`; never throws: what goes wrong is the image's reason. */
  private async prepare(value: string, base: string, config: ClipPreprocessConfig): Promise<Prepared> {
    try {
      const ref = resolveImageReference(value, base);
      if ("error" in ref) return { ok: false, reason: ref.error };
      const fetched = await this.fetcher.fetch(ref);
      if (!fetched.ok) return { ok: false, reason: fetched.reason };
      return { ok: true, pixels: await preprocessImage(fetched.bytes, config) };
    } catch (error) {
      return { ok: false, reason: describe(error) };
    }
  }

  /** Embeds the preprocessed images of `chunk` into `embedded` (one by one if the chunk fails: a failing image gets its reason). */
  private async embedChunk(chunk: readonly string[], prepared: ReadonlyMap<string, Prepared>, embedded: Map<string, Float32Array | string>): Promise<void> {
    if (chunk.length === 0) return;
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

  async embed(objects: readonly ObjectImages[]): Promise<EmbeddedImages> {
    const vectors = new Map<string, Float32Array[]>();
    const errors = new Map<string, string>();
    const config = await this.model.imageInput();
    // The same reference in several objects of a batch is fetched and embedded once.
    const keyOf = (value: string, base: string) => JSON.stringify([base, value]);
    const unique = new Map<string, { value: string; base: string }>();
    for (const object of objects) for (const image of object.images) unique.set(keyOf(image.value, object.base), { value: image.value, base: object.base });
    const keys = [...unique.keys()];
    // Up to DECODE_CONCURRENCY images are fetched and decoded ahead (on libuv's threads) while the
    // vision tower embeds what is ready. onnxruntime-node runs inference on this thread, blocking it,
    // so a decode moves on only between model calls: the two overlap little (measured: bench:images).
    const slots = new Slots(DECODE_CONCURRENCY);
    const pending = new Map<string, Promise<Prepared>>(
      keys.map((key) => {
        const { value, base } = unique.get(key) as { value: string; base: string };
        return [key, slots.use(() => this.prepare(value, base, config))];
      }),
    );
    const prepared = new Map<string, Prepared>();
    const embedded = new Map<string, Float32Array | string>();
    try {
      for (let start = 0; start < keys.length; start += EMBED_BATCH) {
        const chunk = keys.slice(start, start + EMBED_BATCH);
        for (const key of chunk) prepared.set(key, await (pending.get(key) as Promise<Prepared>));
        await this.embedChunk(chunk.filter((key) => (prepared.get(key) as Prepared).ok), prepared, embedded);
      }
    } finally {
      // A failed chunk (a model that cannot run) leaves no decode running unobserved.
      await Promise.allSettled(pending.values());
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
