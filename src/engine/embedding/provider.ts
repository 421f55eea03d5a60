/**
 * The embedding provider interface: everything search and indexing know of a model.
 * Text models (the bundled Universal Sentence Encoder, Hugging Face models) and image-text
 * models (CLIP: ImageEmbeddingProvider) implement it; a search always embeds its query with the
 * provider recorded for the index.
 */

import type { ClipPreprocessConfig } from "../images/preprocess-config.js";

/** What a text is, for models that embed queries and documents differently (prefixes). */
export type EmbedRole = "query" | "document";

export interface EmbeddingProvider {
  /** Model id as recorded in the index catalog. */
  readonly id: string;
  /** Length of every vector. */
  readonly dimension: number;
  /** Embeds texts (documents unless told otherwise); one vector per text, in order, never cutting a text. */
  embedTexts(texts: readonly string[], role?: EmbedRole): Promise<Float32Array[]>;
  /** Releases the model. */
  dispose(): Promise<void>;
}

/** How a model wants its images: the size and normalisation of its input (images/preprocess-config.ts). */
export type { ClipPreprocessConfig };

/** An image-text model (CLIP): texts and images embedded into one space. */
export interface ImageEmbeddingProvider extends EmbeddingProvider {
  /** The image preprocessing of the model (loads the vision tower). */
  imageInput(): Promise<ClipPreprocessConfig>;
  /** Embeds preprocessed images (CHW floats, `imageInput()`'s size) into unit vectors, in order. */
  embedImages(pixels: readonly Float32Array[]): Promise<Float32Array[]>;
}

/** Whether a provider embeds images too. */
export function embedsImages(provider: EmbeddingProvider): provider is ImageEmbeddingProvider {
  return typeof (provider as Partial<ImageEmbeddingProvider>).embedImages === "function";
}

/** Scales a vector to unit length in place (zero vectors stay zero). */
export function normalise(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] = (vector[i] as number) / norm;
  return vector;
}
