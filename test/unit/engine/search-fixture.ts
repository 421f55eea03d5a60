/**
 * Real LanceDB tables for the ranking and search tests, with vectors drawn from a seeded generator,
 * and the ranking worked out plainly from them (a map by id and whole sorts): the oracle the fast
 * ranking in search/rank.ts must agree with.
 */
import { compareRanked, LEXICAL_RESCORE_DEPTH, type ScoredId } from "../../../src/engine/search/fuse.js";
import { MAX_RESULTS, VECTOR_CANDIDATES } from "../../../src/engine/search/limits.js";
import type { RankQuery } from "../../../src/engine/search/rank.js";
import type { FilterColumnType, IndexRow, LanceStore, Snapshot } from "../../../src/engine/store/lance-store.js";
import { withTopFirst } from "../../../src/engine/store/rows.js";

/** A seeded generator of numbers in [0, 1) (mulberry32). */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A vector of `dimension` values in [-1, 1) (not normalised: cosines do not care). */
export function randomVector(random: () => number, dimension: number): Float32Array {
  return Float32Array.from({ length: dimension }, () => random() * 2 - 1);
}

/** Cosine of two vectors, plainly. */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let x = 0;
  let y = 0;
  for (let i = 0; i < a.length; i++) {
    dot += (a[i] as number) * (b[i] as number);
    x += (a[i] as number) ** 2;
    y += (b[i] as number) ** 2;
  }
  return x === 0 || y === 0 ? 0 : dot / Math.sqrt(x * y);
}

/** Writes rows to a new index table (in batches, as the worker does), with the filter columns given. */
export async function indexTable(store: LanceStore, table: string, rows: readonly IndexRow[], dimension: number, filters = new Map<string, FilterColumnType>()): Promise<void> {
  await store.createIndexTable(table, dimension);
  await store.ensureFilterColumns(table, filters);
  for (let i = 0; i < rows.length; i += 2000) await store.upsertIndexRows(table, rows.slice(i, i + 2000));
}

/**
 * What search.ts hands the ranking for a hybrid search: the lexical part started before the query's
 * vector, with its top matches' stored vectors read ahead.
 */
export function readAhead(store: Snapshot, table: string, text: string, where?: string): NonNullable<RankQuery["lexical"]> {
  const rows = store.textSearch(table, text, MAX_RESULTS, where).then((hits) => withTopFirst(hits, LEXICAL_RESCORE_DEPTH));
  return { table, rows, vectors: rows.then((hits) => store.vectorsOfRows(table, hits, LEXICAL_RESCORE_DEPTH)) };
}

export interface OracleInput {
  /** every row the filter leaves, with its vector */
  rows: readonly IndexRow[];
  /** every lexical match (any order) with its BM25 score */
  lexical: readonly ScoredId[];
  query: Float32Array;
  weight: number;
  /** how many nearest rows the vector part takes */
  candidates?: number;
  rescoreDepth?: number;
}

/**
 * The hybrid ranking as the README states it: the union of the lexical matches and the nearest
 * rows; BM25 over the best BM25; cosine min-max scaled over the nearest and the first
 * `rescoreDepth` lexical matches (by score, then id) that are not among them; fused
 * `(1 - w) * lexical + w * vector`, a part a row has no score in counting 0; best first, then by id.
 */
export function oracleHybrid({ rows, lexical, query, weight, candidates = VECTOR_CANDIDATES, rescoreDepth = LEXICAL_RESCORE_DEPTH }: OracleInput): ScoredId[] {
  const vectorOf = new Map(rows.map((row) => [row.id, row.vector]));
  const nearest = rows
    .map((row) => ({ id: row.id, score: cosine(query, row.vector) }))
    .sort(compareRanked)
    .slice(0, candidates);
  const cosines = new Map(nearest.map((item) => [item.id, item.score]));
  const byScore = [...lexical].sort(compareRanked);
  for (const { id } of byScore.slice(0, rescoreDepth)) {
    const vector = vectorOf.get(id);
    if (vector && !cosines.has(id)) cosines.set(id, cosine(query, vector));
  }
  const values = [...cosines.values()];
  const min = Math.min(...values);
  const max = Math.max(...values);
  const best = Math.max(0, ...lexical.map((item) => item.score));
  const fused = new Map<string, number>();
  for (const { id, score } of lexical) fused.set(id, (1 - weight) * (best > 0 ? score / best : 0));
  for (const { id } of nearest) fused.set(id, fused.get(id) ?? 0);
  for (const [id] of fused) {
    const c = cosines.get(id);
    if (c !== undefined) fused.set(id, (fused.get(id) as number) + weight * (max > min ? (c - min) / (max - min) : 1));
  }
  return [...fused].map(([id, score]) => ({ id, score })).sort(compareRanked);
}
