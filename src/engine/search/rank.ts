/** Ranking the rows of one table (objects or highlight segments) for a query, in each mode. */
import type { Snapshot } from "../store/lance-store.js";
import type { ScoreExplanation } from "../types.js";
import { DEFAULT_TOKENIZER, type Tokenizer } from "../tokenizer.js";
import { cosines, reorderRows, scoredIds, withTopFirst, type RowVectors, type ScoredRows } from "../store/rows.js";
import { compareRanked, fuseWeighted, LEXICAL_RESCORE_DEPTH, rankedCandidates, rankedList, type Ranked, type ScoredId } from "./fuse.js";
import { MAX_RESULTS, SMALL_FILTERED_SET, VECTOR_CANDIDATES } from "./limits.js";
import { hybridTotal, neuralTotal, neuralWindow, type TotalEstimate } from "./paginate.js";
import type { SearchMode } from "./request.js";
import { CLOSE_SPELLING_RATIO, fuzzyForms, isMisspelt, typoCandidates, withFuzzyMatches } from "./typos.js";

export interface Ranking {
  ranked: Ranked;
  /** What the scores of some ranked ids are made of (`result_fields=explain`). */
  explain(ids: readonly string[]): Map<string, ScoreExplanation>;
  /** the total before paging (rules 7-9): pageTotal grows a minimum with the page */
  estimate: TotalEstimate;
  /** whether `ranked` holds every retrievable result (else more may follow it) */
  whole: boolean;
}

export interface RankQuery {
  mode: SearchMode;
  text: string;
  /** the words the lexical part matches (query-words.ts; default `text`) */
  lexicalText?: string;
  /** the index's tokenizer (typo look-ups follow its lower-casing, stemming and folding; default DEFAULT_TOKENIZER) */
  tokenizer?: Tokenizer;
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
    rows: Promise<ScoredRows>;
    /**
     * The stored vectors of its top LEXICAL_RESCORE_DEPTH rows, by position, read ahead for the
     * rescoring (`rows` has those in front: withTopFirst).
     */
    vectors?: Promise<RowVectors>;
  };
}

/**
 * The top `limit` lexical matches, with the first `rescoreDepth` by score and id in front (see
 * withTopFirst): the ones started early when they are these (search.ts prepares them the same way).
 */
async function lexicalRows(store: Snapshot, table: string, q: RankQuery, limit: number, rescoreDepth: number): Promise<ScoredRows> {
  if (q.lexical && q.lexical.table === table && limit === MAX_RESULTS) return q.lexical.rows;
  return withTopFirst(await lexicalMatches(store, table, q.lexicalText ?? q.text, limit, q.where, q.tokenizer), rescoreDepth);
}

/**
 * BM25 matches of a query, typo-tolerant (typos.ts): when it matched fewer than FEW_MATCHES objects,
 * its words of 5 letters or more are looked up alone, and those that match nothing, or match far
 * fewer objects than their close spellings together (isMisspelt), are matched fuzzily too. A query
 * that matched more is not looked into: each look-up is a query of its own (they cost a search of
 * 10,000 objects 4-8 ms at p50 when done for every query), and such a query has its matches from
 * its other words.
 */
export async function lexicalMatches(store: Snapshot, table: string, text: string, limit: number, where: string | undefined, tokenizer: Tokenizer = DEFAULT_TOKENIZER): Promise<ScoredRows> {
  const exact = await store.textSearch(table, text, limit, where);
  const candidates = typoCandidates(text, tokenizer.lowercase);
  if (candidates.length === 0 || exact.ids.length >= FEW_MATCHES) return exact;
  const misspelt = await Promise.all(
    candidates.map(async (candidate) => {
      const found = (await store.textSearch(table, candidate.word, RARE_WORD, where)).ids.length;
      if (found === 0) return true;
      if (found === RARE_WORD) return false;
      // a rare word: is it a misspelling of a common one?
      const near = (await store.fuzzyTextSearch(table, fuzzyForms(candidate, tokenizer), RARE_WORD * CLOSE_SPELLING_RATIO, where)).ids.length;
      return isMisspelt(found, near);
    }),
  );
  const unmatched = candidates.filter((_, i) => misspelt[i]);
  if (unmatched.length === 0) return exact;
  const forms = unmatched.flatMap((candidate) => fuzzyForms(candidate, tokenizer));
  return withFuzzyMatches(exact, await store.fuzzyTextSearch(table, forms, limit, where), limit);
}

/** Matches below which a query's words are looked up for typos. */
const FEW_MATCHES = 50;
/** Objects a word matches below which it is rare, and its close spellings are counted. */
const RARE_WORD = 3;

/** Where the vector part of a ranking comes from: a table's own vectors, or (image indexes) the best image of each object. */
export interface VectorSource {
  /** The nearest rows (objects), best first, each scored by its exact cosine. */
  nearest(vector: Float32Array, limit: number, where: string | undefined, exact: boolean): Promise<ScoredRows>;
  /** Exact similarities of rows a query of the same snapshot returned, by position (NaN: the row has no vector). */
  similarities(vector: Float32Array, rows: ScoredRows): Promise<Float64Array>;
}

/** The rows of `table`, by their own vectors. */
export function tableVectors(store: Snapshot, table: string): VectorSource {
  return {
    nearest: (vector, limit, where, exact) => store.vectorSearch(table, vector, limit, where, exact),
    similarities: async (vector, rows) => cosines(vector, await store.vectorsOfRows(table, rows)),
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
export function bestImageVectors(store: Snapshot, imagesTable: string): VectorSource {
  return {
    async nearest(vector, limit, where, exact) {
      let rows = Math.max(limit * IMAGES_PER_OBJECT, 16);
      while (true) {
        const hits = await store.partVectorSearch(imagesTable, vector, rows, where, exact);
        const best = bestPerObject(hits);
        if (best.length >= limit || hits.length < rows || rows >= MAX_IMAGE_ROWS) return scoredRowsOf(best.slice(0, limit));
        rows = Math.min(rows * 4, MAX_IMAGE_ROWS);
      }
    },
    async similarities(vector, rows) {
      const best = new Map(bestPerObject(await store.partSimilarities(imagesTable, vector, rows.ids)).map((hit) => [hit.id, hit.score]));
      return Float64Array.from(rows.ids, (id) => best.get(id) ?? Number.NaN);
    },
  };
}

function scoredRowsOf(items: readonly ScoredId[]): ScoredRows {
  return { ids: items.map((item) => item.id), scores: Float64Array.from(items, (item) => item.score) };
}

/** An explain function over a ranked list: each wanted id's explanation from its score. */
function explainEach(ranked: readonly ScoredId[], of: (score: number) => ScoreExplanation): Ranking["explain"] {
  return (ids) => {
    const wanted = new Set(ids);
    return new Map(ranked.filter((item) => wanted.has(item.id)).map((item) => [item.id, of(item.score)]));
  };
}

/** The best score of each object among scored parts (images), best first. */
export function bestPerObject(parts: readonly { object_id: string; score: number }[]): ScoredId[] {
  const best = new Map<string, number>();
  for (const { object_id, score } of parts) best.set(object_id, Math.max(score, best.get(object_id) ?? -Infinity));
  return [...best].map(([id, score]) => ({ id, score })).sort(compareRanked);
}

/**
 * Where each lexical match is among the nearest (-1: not there): by LanceDB row id when both parts
 * are rows of one snapshot's table, else by id (image indexes rank objects by their images).
 */
function joinNearest(lexical: ScoredRows, nearest: ScoredRows): Int32Array {
  const out = new Int32Array(lexical.ids.length).fill(-1);
  if (nearest.ids.length === 0) return out;
  if (lexical.rows && nearest.rows) {
    const at = new Map<number, number>();
    nearest.rows.forEach((row, k) => at.set(row, k));
    const rows = lexical.rows;
    for (let i = 0; i < rows.length; i++) out[i] = at.get(rows[i] as number) ?? -1;
  } else {
    const at = new Map(nearest.ids.map((id, k) => [id, k]));
    lexical.ids.forEach((id, i) => (out[i] = at.get(id) ?? -1));
  }
  return out;
}

/**
 * @param keep how many of the fused candidates the ranking holds (objects: MAX_RESULTS; highlight
 *   segments: fewer, and their lexical part and rescoring stop there too)
 */
async function rankHybrid(store: Snapshot, table: string, q: RankQuery, keep: number, rescoreDepth: number, vectors: VectorSource): Promise<Ranking> {
  const pending = vectors.nearest(q.vector, vectorCandidates(q), q.where, smallSet(q));
  pending.catch(() => {});
  // (the matches rescored are the first `rescoreDepth` by score and id, in every process)
  const lexical = await lexicalRows(store, table, q, keep, rescoreDepth);
  // Exact cosine for the top lexical matches that are not among the nearest, so the vector part
  // scores every strong candidate (see fuse.ts for the measurements behind this). When their vectors
  // were read ahead, it is computed here, while LanceDB looks for the nearest.
  const depth = Math.min(rescoreDepth, lexical.ids.length);
  const readAhead = q.lexical?.table === table && keep === MAX_RESULTS && rescoreDepth === LEXICAL_RESCORE_DEPTH ? q.lexical.vectors : undefined;
  const early = readAhead ? cosines(q.vector, await readAhead) : undefined;
  const nearest = await pending;
  const nearestOf = joinNearest(lexical, nearest);
  let rescored: Float64Array;
  if (early) {
    rescored = early;
  } else {
    const missing: number[] = [];
    for (let i = 0; i < depth; i++) if ((nearestOf[i] as number) < 0) missing.push(i);
    const scores = await vectors.similarities(q.vector, reorderRows(lexical, missing));
    rescored = new Float64Array(depth).fill(Number.NaN);
    missing.forEach((i, k) => (rescored[i] = scores[k] as number));
  }
  const fused = fuseWeighted({ lexical: lexical.scores, lexicalCeiling: lexical.ceiling, nearest: nearest.scores, nearestOf, rescored }, q.vectorWeight);
  const matches = lexical.ids.length;
  const idOf = (candidate: number) => (candidate < matches ? lexical.ids[candidate] : nearest.ids[fused.nearestOnly[candidate - matches] as number]) as string;
  const ranked = rankedCandidates(fused.scores, idOf, keep);
  const explain = (ids: readonly string[]) => {
    const wanted = new Set(ids);
    const out = new Map<string, ScoreExplanation>();
    const part = (lexicalScore: number | null, cosine: number | null, score: number): ScoreExplanation => ({
      ranking: "hybrid",
      lexical: lexicalScore === null ? null : { score: lexicalScore, normalized: fused.lexicalBest > 0 ? lexicalScore / fused.lexicalBest : 0 },
      vector: cosine === null || Number.isNaN(cosine) ? null : { similarity: cosine, normalized: fused.scaled(cosine) },
      semantic_ratio: q.vectorWeight,
      fused: score,
    });
    for (let c = 0; c < fused.scores.length; c++) {
      const id = idOf(c);
      if (!wanted.has(id) || out.has(id)) continue;
      const at = c < matches ? (nearestOf[c] as number) : (fused.nearestOnly[c - matches] as number);
      const cosine = at >= 0 ? (nearest.scores[at] as number) : c < rescored.length ? (rescored[c] as number) : null;
      out.set(id, part(c < matches ? (lexical.scores[c] as number) : null, cosine, fused.scores[c] as number));
    }
    return out;
  };
  return {
    ranked,
    explain,
    estimate: hybridTotal(nearest.ids.length, matches, Math.min(fused.scores.length, MAX_RESULTS), matches >= MAX_RESULTS),
    // (the union of every lexical match and the nearest is every result, unless either was cut)
    whole: matches < keep && fused.scores.length <= keep,
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
export async function rankRows(store: Snapshot, table: string, q: RankQuery, depth = MAX_RESULTS, vectors: VectorSource = tableVectors(store, table)): Promise<Ranking> {
  const ranking = await rankByMode(store, table, q, depth, vectors);
  // A ranking that holds every row the filter leaves knows the exact total (rule 9).
  if (q.filtered !== undefined && ranking.ranked.count === q.filtered) return { ...ranking, estimate: { total: q.filtered, exact: true }, whole: true };
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
  const head = scoredIds(await vectors.nearest(vector, Math.min(want, VECTOR_CANDIDATES), q.where, exact)).sort(compareRanked);
  if (want <= VECTOR_CANDIDATES || head.length < Math.min(want, VECTOR_CANDIDATES)) return head;
  const listed = new Set(head.map((hit) => hit.id));
  const rest = scoredIds(await vectors.nearest(vector, want, q.where, true)).filter((hit) => !listed.has(hit.id)).sort(compareRanked);
  return [...head, ...rest].slice(0, want);
}

async function rankByMode(store: Snapshot, table: string, q: RankQuery, depth: number, vectors: VectorSource): Promise<Ranking> {
  if (q.mode === "lexical") {
    const ranked = scoredIds(await lexicalRows(store, table, q, depth, 0)).sort(compareRanked);
    const best = ranked[0]?.score ?? 0;
    const explain = explainEach(ranked, (score) => ({ ranking: "lexical", lexical: { score, normalized: best > 0 ? score / best : 0 } }));
    return { ranked: rankedList(ranked), explain, estimate: { total: ranked.length, exact: ranked.length < depth }, whole: ranked.length < depth };
  }
  if (q.mode === "vector") {
    const window = depth < MAX_RESULTS ? depth : neuralWindow(q.offset, q.limit);
    const want = Math.max(window, depth < MAX_RESULTS ? 0 : Math.min(vectorCandidates(q), MAX_RESULTS));
    const ranked = await nearestPages(vectors, q.vector, want, q);
    const explain = explainEach(ranked, (score) => ({ ranking: "vector", vector: { similarity: score, normalized: score } }));
    return { ranked: rankedList(ranked), explain, estimate: neuralTotal(want, ranked.length), whole: ranked.length < want };
  }
  return rankHybrid(store, table, q, depth, Math.min(depth, LEXICAL_RESCORE_DEPTH), vectors);
}
