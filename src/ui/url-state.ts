/**
 * The page's state as it lives in its URL: `/?index=<id or name>&q=<query>&filter=<filter>&page=<n>`
 * (plus `mode` and `ratio` when not the defaults), so a search can be bookmarked and shared. Never
 * the key. Pure.
 */

export const MODES = ["hybrid", "lexical", "vector"] as const;
export type Mode = (typeof MODES)[number];

export interface PageState {
  /** An index id or name; "" when none is chosen. */
  index: string;
  q: string;
  filter: string;
  /** 1-based. */
  page: number;
  /** Absent: the index's default (hybrid). */
  mode?: Mode;
  /** Absent: the server's default. From 0 to 1. */
  ratio?: number;
}

/** Results per page: the API's default. */
export const PAGE_SIZE = 10;
/** The last page the API can reach (offsets up to 9,999). */
export const MAX_PAGE = Math.floor(9_999 / PAGE_SIZE) + 1;

function wholeIn(text: string | null, min: number, max: number): number | undefined {
  if (text === null || !/^\d{1,6}$/.test(text)) return undefined;
  const n = Number(text);
  return n >= min && n <= max ? n : undefined;
}

/** The state a URL's query string holds; what is missing or malformed takes its default. */
export function readState(search: string): PageState {
  const params = new URLSearchParams(search);
  const state: PageState = {
    index: params.get("index") ?? "",
    q: params.get("q") ?? "",
    filter: params.get("filter") ?? "",
    page: wholeIn(params.get("page"), 1, MAX_PAGE) ?? 1,
  };
  const mode = params.get("mode");
  if ((MODES as readonly string[]).includes(mode ?? "")) state.mode = mode as Mode;
  const ratio = params.get("ratio");
  if (ratio !== null && /^(0(\.\d{1,3})?|1(\.0{1,3})?)$/.test(ratio)) state.ratio = Number(ratio);
  return state;
}

/** The query string (with its `?`, or "" when empty) that holds a state; defaults are left out. */
export function writeState(state: PageState): string {
  const params = new URLSearchParams();
  if (state.index) params.set("index", state.index);
  if (state.q) params.set("q", state.q);
  if (state.filter) params.set("filter", state.filter);
  if (state.page > 1) params.set("page", String(state.page));
  if (state.mode && state.mode !== "hybrid") params.set("mode", state.mode);
  if (state.ratio !== undefined) params.set("ratio", String(state.ratio));
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** The offset of a page's first result. */
export function offsetOf(page: number, limit = PAGE_SIZE): number {
  return (Math.max(1, Math.min(page, MAX_PAGE)) - 1) * limit;
}

/** The search request's query parameters for a state (the page's own choice of returned fields aside). */
export function searchParams(state: PageState, objectFields: string): URLSearchParams {
  const params = new URLSearchParams({ query: state.q, limit: String(PAGE_SIZE), offset: String(offsetOf(state.page)), object_fields: objectFields, result_fields: "highlights,score,explain", highlights_rank: "false" });
  if (state.filter.trim()) params.set("filter_query", state.filter);
  if (state.mode && state.mode !== "hybrid") params.set("mode", state.mode);
  if (state.ratio !== undefined) params.set("semantic_ratio", String(state.ratio));
  return params;
}
