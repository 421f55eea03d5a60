import { describe, expect, it } from "vitest";
import { paginationView } from "../../../src/ui/pagination-view.js";

describe("what the page says about pagination", () => {
  it("says an exact total and the page among the pages", () => {
    const view = paginationView({ pages: 5, page: 2, next: { offset: 20, limit: 10 }, statistics: { total: 41, total_calculation: "exact" } }, 10);
    expect(view).toEqual({ total: "41 results", position: "Page 2 of 5", announcement: "41 results; Page 2 of 5; showing 10 results", hasPrevious: true, next: { offset: 20, limit: 10 } });
  });

  it("says a minimum as at least, for the total and the pages", () => {
    const view = paginationView({ pages: 25.0, page: 1.0, next: { offset: 10, limit: 10 }, statistics: { total: 250, total_calculation: "minimum" } }, 10);
    expect(view.total).toBe("at least 250 results");
    expect(view.position).toBe("Page 1 of at least 25");
    expect(view.hasPrevious).toBe(false);
  });

  it("has no next on the last page, and says when there is nothing", () => {
    expect(paginationView({ pages: 5, page: 5, statistics: { total: 41, total_calculation: "exact" } }, 1).next).toBe(null);
    expect(paginationView({ pages: 5, page: 5, statistics: { total: 41, total_calculation: "exact" } }, 1).announcement).toBe("41 results; Page 5 of 5; showing 1 result");
    const none = paginationView({ pages: 0, page: 1, statistics: { total: 0, total_calculation: "exact" } }, 0);
    expect(none).toMatchObject({ total: "No results", position: "", announcement: "No results", next: null, hasPrevious: false });
    expect(paginationView({ pages: 1, page: 3, statistics: { total: 4, total_calculation: "exact" } }, 0).announcement).toBe("No results on page 3: the last page is 1");
    expect(paginationView({ pages: 1, page: 1, statistics: { total: 1_234_567, total_calculation: "exact" } }, 1).total).toBe("1,234,567 results");
  });
});

describe("a page past the last (a hostile or old ?page=)", () => {
  it("says how many pages there are, never that the page asked for is the last", () => {
    const view = paginationView({ pages: 5, page: 999, statistics: { total: 47, total_calculation: "exact" } }, 0);
    expect(view.position).toBe("Page 999: past the last page (5)");
    expect(view.announcement).toBe("No results on page 999: the last page is 5");
    expect(view.hasPrevious).toBe(true);
  });
});
