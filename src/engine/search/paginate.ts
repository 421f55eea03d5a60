/**
 * Pagination and result statistics (spec §2.7 and §4.3). Pure.
 *
 * Rules (also in the README):
 * - page = floor(offset / limit) + 1
 * - pages = ceil(total / limit), so 0 when there are no results
 * - next = {offset + limit, min(limit, remaining)} while results remain after this page; absent on the last page
 * - a minimum total grows once the page goes past it, and is exact at the end of a whole list (pageTotal)
 */
import { MAX_RESULTS, VECTOR_CANDIDATES } from "./limits.js";
import type { Pagination } from "../types.js";

export interface TotalEstimate {
  total: number;
  exact: boolean;
}

/**
 * @param available how many ranked results are known to be retrievable right now
 *   (the page is `results.slice(offset, offset + limit)` of them)
 */
export function paginate(offset: number, limit: number, available: number, estimate: TotalEstimate): Pagination {
  const pagination: Pagination = {
    pages: Math.ceil(estimate.total / limit),
    page: Math.floor(offset / limit) + 1,
    statistics: { total: estimate.total, total_calculation: estimate.exact ? "exact" : "minimum" },
  };
  const nextOffset = offset + limit;
  if (nextOffset < available) pagination.next = { offset: nextOffset, limit: Math.min(limit, available - nextOffset) };
  return pagination;
}

/**
 * Hybrid total (rule 7): the greater of the vector and lexical match counts, capped at MAX_RESULTS.
 * The fused list is their union, so it can hold more than that: the total is then a minimum.
 * @param lexicalCapped true when the lexical part stopped at MAX_RESULTS and more matches may exist
 */
export function hybridTotal(vectorCount: number, lexicalCount: number, fusedCount: number, lexicalCapped: boolean): TotalEstimate {
  const total = Math.min(MAX_RESULTS, Math.max(vectorCount, lexicalCount));
  return { total, exact: fusedCount === total && !lexicalCapped };
}

/**
 * How many nearest neighbours a neural-only search fetches for a page: at least the first
 * vector result set, and enough to know the size of the following page.
 */
export function neuralWindow(offset: number, limit: number): number {
  return Math.min(MAX_RESULTS, Math.max(VECTOR_CANDIDATES, offset + 2 * limit));
}

/**
 * Neural-only total (rule 8): exact when the search came back with fewer neighbours than it asked
 * for (the list is whole); otherwise a minimum of VECTOR_CANDIDATES, which pageTotal grows.
 */
export function neuralTotal(requested: number, got: number): TotalEstimate {
  if (got < requested) return { total: got, exact: true };
  return { total: Math.min(got, VECTOR_CANDIDATES), exact: false };
}

/**
 * The total a page shows (rule 10, for every mode): a minimum grows to the results up to the end of
 * the page once the page goes past it (capped at MAX_RESULTS), and becomes exact when the page
 * reaches the end of a list known to be whole. An exact total stays as it is.
 * @param first the total before paging: rule 7 (hybrid), 8 (neural-only) or 9 (a small filtered set)
 * @param available how many ranked results are retrievable right now (as for paginate)
 * @param whole whether those are every retrievable result (else more may follow them)
 */
export function pageTotal(first: TotalEstimate, offset: number, limit: number, available: number, whole: boolean): TotalEstimate {
  if (first.exact) return first;
  const through = Math.min(available, offset + limit);
  if (whole && through === available && available <= MAX_RESULTS) return { total: available, exact: true };
  return { total: Math.min(MAX_RESULTS, Math.max(first.total, through)), exact: false };
}
