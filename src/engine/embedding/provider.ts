/**
 * The embedding provider interface: everything search and indexing know of a model.
 * Text models (the bundled Universal Sentence Encoder, Hugging Face models) and image
 * models (CLIP, later) implement it; a search always embeds its query with the
 * provider recorded for the index.
 */

export interface EmbeddingProvider {
  /** Model id as recorded in the index catalog. */
  readonly id: string;
  /** Length of every vector. */
  readonly dimension: number;
  /** Embeds texts; one unit-length vector per text, in order. */
  embedTexts(texts: readonly string[]): Promise<Float32Array[]>;
  /** Releases the model. */
  dispose(): Promise<void>;
}

/** What the registry knows of a model before loading it. */
export interface ModelDescriptor {
  id: string;
  dimension: number;
  description: string;
  /** Loads the model (lazily imports its runtime). */
  load(): Promise<EmbeddingProvider>;
}

/** Scales a vector to unit length in place (zero vectors stay zero). */
export function normalise(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] = (vector[i] as number) / norm;
  return vector;
}
