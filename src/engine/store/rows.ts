/**
 * What queries return, column by column, and the stored vectors of those rows with their exact
 * cosine similarities. Pure: the store fills these from LanceDB's Arrow columns (or from vectors
 * held in memory, vector-cache.ts), and ranking computes with them without making an object per row
 * (a 10,000-match lexical query at 100,000 objects made 10,000 of them per search).
 */

/** Scored rows of one query, position by position. */
export interface ScoredRows {
  readonly ids: readonly string[];
  readonly scores: Float64Array;
  /**
   * LanceDB's row ids (a fragment number times 2^32 plus an offset, exact as numbers), when the rows
   * come from a snapshot's table: valid for reading the same rows again in it.
   */
  readonly rows?: Float64Array;
  /** Lexical matches: the score a full match would have, when above the best listed (typos.ts); fusion scales by it. */
  readonly ceiling?: number;
}

export const NO_ROWS: ScoredRows = { ids: [], scores: new Float64Array(0) };

/** Rows in another order: position i of the result is position order[i] of `from`. */
export function reorderRows(from: ScoredRows, order: ArrayLike<number>): ScoredRows {
  const ids = new Array<string>(order.length);
  const scores = new Float64Array(order.length);
  const rows = from.rows ? new Float64Array(order.length) : undefined;
  for (let i = 0; i < order.length; i++) {
    const at = order[i] as number;
    ids[i] = from.ids[at] as string;
    scores[i] = from.scores[at] as number;
    if (rows) rows[i] = (from.rows as Float64Array)[at] as number;
  }
  return rows ? { ids, scores, rows } : { ids, scores };
}

/**
 * The rows with the first `n` of them (by score, then ascending id: compareRanked's order) in front;
 * `rows` itself when they are there already. LanceDB lists matches of equal BM25 score in an order
 * that differed between processes, and rows not yet in its full-text index after the others whatever
 * their score, while a hybrid search rescores the first 1,000: which of 1,050 matches tied at the
 * 1,000th score got an exact cosine changed from one process to the next, and with it the results.
 * Only the cut matters (the fusion ranks by score and id), so in a list already best first only a run
 * of equal scores across it is put in id order: sorting every run cost 5 ms a search at 100,000
 * objects.
 */
export function withTopFirst(rows: ScoredRows, n: number): ScoredRows {
  const { ids, scores } = rows;
  if (n <= 0 || n >= scores.length) return rows;
  const byId = (a: number, b: number) => {
    const x = ids[a] as string;
    const y = ids[b] as string;
    return x < y ? -1 : x > y ? 1 : 0;
  };
  const order = Array.from(ids, (_, i) => i);
  for (let i = 1; i < scores.length; i++) {
    if ((scores[i] as number) > (scores[i - 1] as number)) return reorderRows(rows, order.sort((a, b) => (scores[b] as number) - (scores[a] as number) || byId(a, b)));
  }
  const cut = scores[n - 1] as number;
  if (scores[n] !== cut) return rows;
  let start = n - 1;
  while (start > 0 && scores[start - 1] === cut) start -= 1;
  let end = n + 1;
  while (end < scores.length && scores[end] === cut) end += 1;
  let inOrder = true;
  for (let i = start + 1; i < end && inOrder; i++) inOrder = byId(i - 1, i) <= 0;
  if (inOrder) return rows;
  order.slice(start, end).sort(byId).forEach((at, k) => (order[start + k] = at));
  return reorderRows(rows, order);
}

/** Positions by descending score, leaving out NaN scores; equal scores keep their order. */
export function byScore(scores: Float64Array): number[] {
  const order: number[] = [];
  for (let i = 0; i < scores.length; i++) if (!Number.isNaN(scores[i])) order.push(i);
  return order.sort((a, b) => (scores[b] as number) - (scores[a] as number) || a - b);
}

/** The rows as a list of `{id, score}`, in their order. */
export function scoredIds(rows: ScoredRows): { id: string; score: number }[] {
  return rows.ids.map((id, i) => ({ id, score: rows.scores[i] as number }));
}

/**
 * Stored vectors of rows, by position: row i's vector is `data[offsets[i] … offsets[i] + dimension)`
 * and the sum of its squares `norms[i]`; `offsets[i]` is -1 when the row has no vector.
 */
export interface RowVectors {
  dimension: number;
  data: Float32Array;
  offsets: Int32Array;
  norms: Float64Array;
}

/** The sum of squares of `dimension` values from `start`, in index order. */
export function squaredNorm(data: ArrayLike<number>, start: number, dimension: number): number {
  let sum = 0;
  for (let i = start, end = start + dimension; i < end; i++) {
    const x = data[i] as number;
    sum += x * x;
  }
  return sum;
}

/**
 * Cosine similarity of `query` to each row's vector (0 when either is all zeros), NaN for a row
 * without one: the dot product over the root of the product of the two sums of squares. Every score
 * of a search comes from here, with the sums in one fixed order, so that a row's score is the same
 * to the last bit whether its vector was held or read.
 */
export function cosines(query: Float32Array, vectors: RowVectors): Float64Array {
  const { data, offsets, norms, dimension } = vectors;
  const queryNorm = squaredNorm(query, 0, dimension);
  const out = new Float64Array(offsets.length);
  for (let i = 0; i < offsets.length; i++) {
    const start = offsets[i] as number;
    if (start < 0) {
      out[i] = Number.NaN;
      continue;
    }
    // four sums, so that the loop is not one chain of dependent additions (0.6 ms for 1,250 rows of
    // 512 instead of 0.95)
    let a = 0;
    let b = 0;
    let c = 0;
    let d = 0;
    let k = 0;
    for (; k + 3 < dimension; k += 4) {
      a += (query[k] as number) * (data[start + k] as number);
      b += (query[k + 1] as number) * (data[start + k + 1] as number);
      c += (query[k + 2] as number) * (data[start + k + 2] as number);
      d += (query[k + 3] as number) * (data[start + k + 3] as number);
    }
    for (; k < dimension; k++) a += (query[k] as number) * (data[start + k] as number);
    const dot = a + b + (c + d);
    const norm = norms[i] as number;
    out[i] = queryNorm === 0 || norm === 0 ? 0 : dot / Math.sqrt(queryNorm * norm);
  }
  return out;
}

const FRAGMENT = 2 ** 32;

/**
 * LanceDB row ids to positions 0 … n-1: one array of offsets per fragment, so a lookup is two array
 * reads instead of a hash of a number past 2^31 (a Map took 0.55 ms for 10,000 lookups, this 0.1).
 */
export class RowIndex {
  private readonly fragments = new Map<number, Int32Array>();
  private lastFragment = -1;
  private last: Int32Array | undefined;

  /** Records that row id `row` is at `position`. */
  set(row: number, position: number): void {
    const fragment = Math.floor(row / FRAGMENT);
    const offset = row - fragment * FRAGMENT;
    let positions = this.fragments.get(fragment);
    if (!positions || offset >= positions.length) {
      const grown = new Int32Array(Math.max(1024, offset + 1, (positions?.length ?? 0) * 2)).fill(-1);
      if (positions) grown.set(positions);
      positions = grown;
      this.fragments.set(fragment, positions);
      this.lastFragment = -1;
    }
    positions[offset] = position;
  }

  /** The position of row id `row`, or -1. */
  get(row: number): number {
    const fragment = Math.floor(row / FRAGMENT);
    if (fragment !== this.lastFragment) {
      this.last = this.fragments.get(fragment);
      this.lastFragment = fragment;
    }
    const offset = row - fragment * FRAGMENT;
    return this.last !== undefined && offset < this.last.length ? (this.last[offset] as number) : -1;
  }
}
