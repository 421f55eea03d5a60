/** What the page says about a response's pagination (spec §2.7), from the response alone. Pure. */

export interface Pagination {
  pages: number;
  page: number;
  next?: { offset: number; limit: number };
  statistics: { total: number; total_calculation: "exact" | "minimum" };
}

export interface PaginationView {
  /** "42 results", "at least 250 results", "No results". */
  total: string;
  /** "Page 2 of 5", "Page 2 of at least 25". */
  position: string;
  /** What a screen reader is told when results arrive. */
  announcement: string;
  hasPrevious: boolean;
  /** The response's own `next`, or null on the last page. */
  next: { offset: number; limit: number } | null;
}

const plural = (n: number, one: string, many: string) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;

export function paginationView(pagination: Pagination, shown: number): PaginationView {
  const { total, total_calculation: calculation } = pagination.statistics;
  // (numbers may arrive as 10.0: they are numbers either way)
  const page = Math.max(1, Math.round(pagination.page));
  const minimum = calculation === "minimum";
  // A page past the last (a URL's ?page= from a bookmark of a bigger result set, or typed) is said to be.
  const past = !minimum && shown === 0 && total > 0 && page > Math.round(pagination.pages);
  const pages = past ? Math.round(pagination.pages) : Math.max(page, Math.round(pagination.pages));
  const totalText = total === 0 && !minimum ? "No results" : minimum ? `at least ${plural(total, "result", "results")}` : plural(total, "result", "results");
  const position = total === 0 && shown === 0 ? "" : past ? `Page ${page}: past the last page (${pages.toLocaleString("en-US")})` : `Page ${page} of ${minimum ? "at least " : ""}${pages.toLocaleString("en-US")}`;
  const announcement = past ? `No results on page ${page}: the last page is ${pages.toLocaleString("en-US")}` : shown === 0 ? (page > 1 ? `No results on page ${page}` : "No results") : `${totalText}; ${position}; showing ${plural(shown, "result", "results")}`;
  return { total: totalText, position, announcement, hasPrevious: page > 1, next: pagination.next ? { offset: pagination.next.offset, limit: pagination.next.limit } : null };
}
