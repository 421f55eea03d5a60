/** Ranking the rows of one table (objects or highlight segments) for a query, in each mode. */
import { similaritiesOf, type LanceStore, type ScoredRow } from "../store/lancedb.js";
import { compareRanked, fuseWeighted, LEXICAL_RESCORE_DEPTH, type ScoredId } from "./fuse.js";
import { MAX_RESULTS, SMALL_FILTERED_SET, VECTOR_CANDIDATES } from "./limits.js";
import { hybridTotal, neuralTotal, neuralWindow, type TotalEstimate } from "./paginate.js";
import type { SearchMode } from "./request.js";

export interface Ranking {
  ranked: ScoredId[];
  estimate: TotalEstimate;
}

export interface RankQuery {
  mode: SearchMode;
  text: string;
  vector: Float32Array;
  vectorWeight: number;
  /** neural-only paging: the window depends on the page */
  offset: number;
  limit: number;
  /** a compiled filter: only rows it matches are ranked */
  where?: string;
  /** rows the filter leaves, when a filter is given */
  filtered?: number;
  /**
   * The lexical part of `table`'s ranking (its top MAX_RESULTS under `where`), started before the
   * query's vector was ready: a cold process runs it while the model loads.
   */
  lexical?: {
    table: string;
    rows: Promise<ScoredRow[]>;
    /** The stored vectors of its top LEXICAL_RESCORE_DEPTH rows, by id, read ahead for the rescoring. */
    vectors?: Promise<Map<string, Float32Array>>;
  };
}

/** The top `limit` lexical matches: the ones started early when they are these. */
function lexicalRows(store: LanceStore, table: string, q: RankQuery, limit: number): Promise<ScoredRow[]> {
  if (q.lexical && q.lexical.table === table && limit === MAX_RESULTS) return q.lexical.rows;
  return store.textSearch(table, q.text, limit, q.where);
}

/** Where the vector part of a ranking comes from: a table's own vectors, or (image indexes) the best image of each object. */
export interface VectorSource {
  nearest(vector: Float32Array, limit: number, where: string | undefined, exact: boolean): Promise<ScoredId[]>;
  /** Exact similarities of rows a query of the same snapshot returned. */
  similarities(vector: Float32Array, rows: readonly ScoredRow[]): Promise<ScoredId[]>;
}

/** The rows of `table`, by their own vectors. */
export function tableVectors(store: LanceStore, table: string): VectorSource {
  return {
    nearest: (vector, limit, where, exact) => store.vectorSearch(table, vector, limit, where, exact),
    similarities: (vector, rows) => store.similaritiesOfRows(table, vector, rows),
  };
}

/** Image rows fetched per object wanted, at first (most objects have one image). */
const IMAGES_PER_OBJECT = 2;
/** The most image rows one nearest-objects query reads. */
const MAX_IMAGE_ROWS = 100_000;

/**
 * Objects ranked by their best image (rows of an images table, keyed by `object_id`): the nearest
 * images are read until `limit` distinct objects are found or none are left.
 */
export function bestImageVectors(store: LanceStore, imagesTable: string): VectorSource {
  return {
    async nearest(vector, limit, where, exact) {
      let rows = Math.max(limit * IMAGES_PER_OBJECT, 16);
      while (true) {
        const hits = await store.partVectorSearch(imagesTable, vector, rows, where, exact);
        const best = bestPerObject(hits);
        if (best.length >= limit || hits.length < rows || rows >= MAX_IMAGE_ROWS) return best.slice(0, limit);
        rows = Math.min(rows * 4, MAX_IMAGE_ROWS);
      }
    },
    async similarities(vector, rows) {
      return bestPerObject(await store.partSimilarities(imagesTable, vector, rows.map((hit) => hit.id)));
    },
  };
}

/** The best score of each object among scored parts (images), best first. */
export function bestPerObject(parts: readonly { object_id: string; score: number }[]): ScoredId[] {
  const best = new Map<string, number>();
  for (const { object_id, score } of parts) best.set(object_id, Math.max(score, best.get(object_id) ?? -Infinity));
  return [...best].map(([id, score]) => ({ id, score })).sort(compareRanked);
}

async function rankHybrid(store: LanceStore, table: string, q: RankQuery, lexicalLimit: number, rescoreDepth: number, vectors: VectorSource): Promise<Ranking> {
  const [vectorHits, lexicalHits] = await Promise.all([
    vectors.nearest(q.vector, vectorCandidates(q), q.where, smallSet(q)),
    lexicalRows(store, table, q, lexicalLimit),
  ]);
  // Exact cosine for the top lexical matches that are not among the nearest, so the vector part
  // scores every strong candidate (see fuse.ts for the measurements behind this).
  const nearest = new Set(vectorHits.map((hit) => hit.id));
  const rescore = lexicalHits.slice(0, rescoreDepth).filter((hit) => !nearest.has(hit.id));
  const readAhead = q.lexical?.table === table && lexicalLimit === MAX_RESULTS && rescoreDepth === LEXICAL_RESCORE_DEPTH ? q.lexical.vectors : undefined;
  const cosine = [...vectorHits, ...(readAhead ? similaritiesOf(q.vector, rescore, await readAhead) : await vectors.similarities(q.vector, rescore))];
  const ranked = fuseWeighted(lexicalHits, cosine, q.vectorWeight).slice(0, MAX_RESULTS);
  return {
    ranked,
    estimate: hybridTotal(vectorHits.length, lexicalHits.length, ranked.length, lexicalHits.length >= MAX_RESULTS),
  };
}

/**
 * How many nearest neighbours the vector part takes: VECTOR_CANDIDATES (rule 6), or every row a
 * filter leaves when that is a small set (rule 9), so the ranking covers the whole set.
 */
function vectorCandidates(q: RankQuery): number {
  return smallSet(q) ? Math.max(q.filtered as number, 1) : VECTOR_CANDIDATES;
}

/** Whether a filter leaves a small exact set: then the vector part scans it whole (no approximate index). */
function smallSet(q: RankQuery): boolean {
  return q.filtered !== undefined && q.filtered <= SMALL_FILTERED_SET;
}

/**
 * Ranks a table's rows.
 * @param depth how many rows are wanted at most (objects: MAX_RESULTS; highlight segments: MAX_HIGHLIGHTS)
 */
export async function rankRows(store: LanceStore, table: string, q: RankQuery, depth = MAX_RESULTS, vectors: VectorSource = tableVectors(store, table)): Promise<Ranking> {
  const ranking = await rankByMode(store, table, q, depth, vectors);
  // A ranking that holds every row the filter leaves knows the exact total (rule 9).
  if (q.filtered !== undefined && ranking.ranked.length === q.filtered) return { ...ranking, estimate: { total: q.filtered, exact: true } };
  return ranking;
}

/**
 * The `want` nearest rows for neural-only paging, such that every page of a query slices one list.
 * An approximate index does not answer a larger request with a longer version of a smaller one's
 * list, and the window grows with the page: so the first VECTOR_CANDIDATES always come from the
 * same request, and rows past them from an exact scan, less those already listed. (With no index,
 * or a small filtered set, both are exact and this is the plain nearest list.)
 */
async function nearestPages(vectors: VectorSource, vector: Float32Array, want: number, q: RankQuery): Promise<ScoredId[]> {
  const exact = smallSet(q);
  const head = (await vectors.nearest(vector, Math.min(want, VECTOR_CANDIDATES), q.where, exact)).sort(compareRanked);
  if (want <= VECTOR_CANDIDATES || head.length < Math.min(want, VECTOR_CANDIDATES)) return head;
  const listed = new Set(head.map((hit) => hit.id));
  const rest = (await vectors.nearest(vector, want, q.where, true)).filter((hit) => !listed.has(hit.id)).sort(compareRanked);
  return [...head, ...rest].slice(0, want);
}

async function rankByMode(store: LanceStore, table: string, q: RankQuery, depth: number, vectors: VectorSource): Promise<Ranking> {
  if (q.mode === "lexical") {
    const ranked = [...(await lexicalRows(store, table, q, depth))].sort(compareRanked);
    return { ranked, estimate: { total: ranked.length, exact: ranked.length < depth } };
  }
  if (q.mode === "vector") {
    const window = depth < MAX_RESULTS ? depth : neuralWindow(q.offset, q.limit);
    const want = Math.max(window, depth < MAX_RESULTS ? 0 : Math.min(vectorCandidates(q), MAX_RESULTS));
    const ranked = await nearestPages(vectors, q.vector, want, q);
    return { ranked, estimate: neuralTotal(q.offset, q.limit, want, ranked.length) };
  }
  // Highlight segments need only the top `depth`: their lexical part and rescoring stop there too.
  const ranking = await rankHybrid(store, table, q, depth < MAX_RESULTS ? depth : MAX_RESULTS, Math.min(depth, LEXICAL_RESCORE_DEPTH), vectors);
  return depth < MAX_RESULTS ? { ...ranking, ranked: ranking.ranked.slice(0, depth) } : ranking;
}
