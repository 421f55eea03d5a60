/** Limits of search, from spec §8 and semsearch's own documented choices. */

/** Page size when `limit` is not given (spec §8). */
export const DEFAULT_LIMIT = 10;
/** Largest accepted `limit` (the spec leaves it open; semsearch's choice, documented in the README). */
export const MAX_LIMIT = 1000;
/**
 * Longest query, in characters (semsearch's choice; the spec sets none). Embedding costs time in
 * proportion to the text: a 630 KB query held a server's event loop for about 25 s in outside
 * testing, while 10,000 characters (a few pages pasted to find what is like them) take well under
 * a second.
 */
export const MAX_QUERY_LENGTH = 10_000;
/** Results that can be counted or fetched (spec §8). */
export const MAX_RESULTS = 10_000;
/** Size of the first vector result set (spec §4.3 rule 6). */
export const VECTOR_CANDIDATES = 250;
/**
 * A filter leaving at most this many objects is a "small exact set" (spec §4.3 rule 9): every one
 * of them is ranked, and the total is exact.
 */
export const SMALL_FILTERED_SET = 1000;
/**
 * Most conditions in one filter. OR-ed equality matches of one field cost LanceDB one `IN` list;
 * other conditions each cost a scalar index search, and the time grows faster than their number
 * (measured on indexed columns: 1,000 conditions add under a second, 5,000 about 7 s, 20,000 over
 * a minute). The shape of the clause is what keeps LanceDB from crashing (search/filters.ts).
 */
export const MAX_FILTER_CONDITIONS = 1000;
