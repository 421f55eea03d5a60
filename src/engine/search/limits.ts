/** Limits of search, from spec §8 and semsearch's own documented choices. */

/** Page size when `limit` is not given (spec §8). */
export const DEFAULT_LIMIT = 10;
/** Largest accepted `limit` (the spec leaves it open; semsearch's choice, documented in the README). */
export const MAX_LIMIT = 1000;
/** Results that can be counted or fetched (spec §8). */
export const MAX_RESULTS = 10_000;
/** Size of the first vector result set (spec §4.3 rule 6). */
export const VECTOR_CANDIDATES = 250;
/**
 * A filter leaving at most this many objects is a "small exact set" (spec §4.3 rule 9): every one
 * of them is ranked, and the total is exact.
 */
export const SMALL_FILTERED_SET = 1000;
