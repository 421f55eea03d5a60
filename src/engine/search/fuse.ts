/**
 * Fusion of the lexical and vector parts of a hybrid index. Pure.
 *
 * Weighted score fusion over normalised scores: BM25 divided by the best BM25 score of the query;
 * cosine similarity min-max scaled over every candidate (the 250 nearest objects plus the top
 * lexical matches, each with its exact cosine), so a lexical match that is not among the nearest
 * still gets the vector evidence it has. Fused score = (1 - w) * lexical + w * vector, 0 standing
 * in for a part an object has no score in.
 *
 * Chosen on SciFact **train** judgments (809 queries, nDCG@10; `node dist/eval/tune.js`): lexical
 * alone 0.699; this fusion 0.703 / 0.704 / 0.709 / 0.710 / 0.704 at w = 0.1 / 0.2 / 0.3 / 0.4 / 0.5;
 * min-max over the 250 nearest only (absent = 0) peaked at 0.706 (w 0.1-0.2) and fell to 0.551 at
 * w = 0.5; z-score fusion 0.711 at w = 0.4; weighted RRF never beat lexical alone (0.648 at w = 0.1).
 */

export interface ScoredId {
  id: string;
  score: number;
}

/** Vector weight of the hybrid fusion (tuned on SciFact train, see above). */
export const DEFAULT_VECTOR_WEIGHT = 0.4;
/** Lexical matches whose exact cosine similarity is computed for the fusion. */
export const LEXICAL_RESCORE_DEPTH = 1000;

/** Descending score, ties broken by id so that every page of a query sees the same order. */
export function compareRanked(a: ScoredId, b: ScoredId): number {
  if (b.score !== a.score) return b.score - a.score;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The two parts of a hybrid ranking, position by position: the lexical matches (best BM25 first)
 * and the nearest objects with their exact cosine, joined by `nearestOf` (lexical match i is nearest
 * object `nearestOf[i]`, or none: -1), and the exact cosine of the top lexical matches that are not
 * among the nearest (`rescored[i]` for lexical match i; NaN when it has none).
 */
export interface HybridParts {
  lexical: ArrayLike<number>;
  /** the BM25 score lexical scores are divided by, when above the best of them */
  lexicalCeiling?: number;
  nearest: ArrayLike<number>;
  nearestOf: Int32Array;
  rescored: ArrayLike<number>;
}

/**
 * Fused scores of the union: candidate i < lexical.length is lexical match i, candidate
 * lexical.length + k the nearest object `nearestOnly[k]`, which matched no term.
 */
export interface FusedParts {
  scores: Float64Array;
  nearestOnly: Int32Array;
  /** what the parts were normalised by: the best BM25, and the cosines' min-max scaling */
  lexicalBest: number;
  scaled(cosine: number): number;
}

/**
 * Fuses the two parts (see the top of this file): BM25 divided by the best BM25 of the query,
 * cosine min-max scaled over every candidate that has one (the nearest and the rescored lexical
 * matches), `(1 - w) * lexical + w * vector`, 0 standing in for a part a candidate has no score in.
 * Position by position, with no map from ids: at 10,000 matches a map of them cost 1.7 ms a search.
 */
export function fuseWeighted(parts: HybridParts, vectorWeight: number = DEFAULT_VECTOR_WEIGHT): FusedParts {
  const { lexical, nearest, nearestOf, rescored } = parts;
  // (a ceiling: the best listed match counts less than a full match, see typos.ts)
  let best = parts.lexicalCeiling ?? 0;
  for (let i = 0; i < lexical.length; i++) best = Math.max(best, lexical[i] as number);
  let min = Infinity;
  let max = -Infinity;
  const matched = new Uint8Array(nearest.length);
  for (let i = 0; i < nearest.length; i++) {
    min = Math.min(min, nearest[i] as number);
    max = Math.max(max, nearest[i] as number);
  }
  for (let i = 0; i < lexical.length; i++) {
    const at = nearestOf[i] as number;
    if (at >= 0) matched[at] = 1;
    else if (i < rescored.length && !Number.isNaN(rescored[i])) {
      min = Math.min(min, rescored[i] as number);
      max = Math.max(max, rescored[i] as number);
    }
  }
  const range = max - min;
  const scaled = (cosine: number) => (range > 0 ? (cosine - min) / range : 1);
  let unmatched = 0;
  for (let k = 0; k < nearest.length; k++) if (!matched[k]) unmatched += 1;
  const scores = new Float64Array(lexical.length + unmatched);
  const nearestOnly = new Int32Array(unmatched);
  for (let i = 0; i < lexical.length; i++) {
    let score = (1 - vectorWeight) * (best > 0 ? (lexical[i] as number) / best : 0);
    const at = nearestOf[i] as number;
    if (at >= 0) score += vectorWeight * scaled(nearest[at] as number);
    else if (i < rescored.length && !Number.isNaN(rescored[i])) score += vectorWeight * scaled(rescored[i] as number);
    scores[i] = score;
  }
  for (let k = 0, c = lexical.length; k < nearest.length; k++) {
    if (matched[k]) continue;
    nearestOnly[c - lexical.length] = k;
    scores[c++] = vectorWeight * scaled(nearest[k] as number);
  }
  return { scores, nearestOnly, lexicalBest: best, scaled };
}

/** A ranked list, sorted only as far as it is read. */
export interface Ranked {
  /** how many items it holds */
  readonly count: number;
  /** its first `n` items, best first (compareRanked) */
  top(n: number): ScoredId[];
}

/** A list already in ranked order. */
export function rankedList(sorted: ScoredId[]): Ranked {
  return { count: sorted.length, top: (n) => sorted.slice(0, n) };
}

/**
 * Candidates numbered 0 … scores.length - 1, ranked by descending score and then ascending id
 * (compareRanked), at most `limit` of them: the first `n` are selected (a heap of n) and sorted, the
 * rest never are. A search reads one page, and sorting every match was most of the fusion's time.
 */
export function rankedCandidates(scores: Float64Array, idOf: (candidate: number) => string, limit: number): Ranked {
  const count = Math.min(limit, scores.length);
  // a before b in the ranking
  const before = (a: number, b: number) => {
    const x = scores[a] as number;
    const y = scores[b] as number;
    return x > y || (x === y && idOf(a) < idOf(b));
  };
  let sorted: number[] = [];
  return {
    count,
    top(n) {
      const want = Math.min(n, count);
      if (want > sorted.length) sorted = topCandidates(scores.length, want, before);
      return sorted.slice(0, want).map((candidate) => ({ id: idOf(candidate), score: scores[candidate] as number }));
    },
  };
}

/** The first `n` of candidates 0 … total - 1 in the order `before`, best first. */
function topCandidates(total: number, n: number, before: (a: number, b: number) => boolean): number[] {
  if (n <= 0) return [];
  // A heap of the best n so far, its root the worst of them.
  const heap: number[] = [];
  const down = (from: number) => {
    let at = from;
    while (true) {
      const left = 2 * at + 1;
      const right = left + 1;
      let worst = at;
      if (left < heap.length && before(heap[worst] as number, heap[left] as number)) worst = left;
      if (right < heap.length && before(heap[worst] as number, heap[right] as number)) worst = right;
      if (worst === at) return;
      const moved = heap[at] as number;
      heap[at] = heap[worst] as number;
      heap[worst] = moved;
      at = worst;
    }
  };
  for (let candidate = 0; candidate < total; candidate++) {
    if (heap.length < n) {
      heap.push(candidate);
      let at = heap.length - 1;
      while (at > 0) {
        const parent = (at - 1) >> 1;
        if (!before(heap[parent] as number, heap[at] as number)) break;
        const moved = heap[at] as number;
        heap[at] = heap[parent] as number;
        heap[parent] = moved;
        at = parent;
      }
    } else if (before(candidate, heap[0] as number)) {
      heap[0] = candidate;
      down(0);
    }
  }
  return heap.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
}
