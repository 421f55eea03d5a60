import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_PAGE, offsetOf, readState, searchParams, writeState, type PageState } from "../../../src/ui/url-state.js";

describe("the page's URL state", () => {
  it("reads index, query, filter and page, with defaults for what is missing or malformed", () => {
    expect(readState("?index=docs&q=plants%20energy&filter=year%3A%3E2019&page=3")).toEqual({ index: "docs", q: "plants energy", filter: "year:>2019", page: 3 });
    expect(readState("")).toEqual({ index: "", q: "", filter: "", page: 1 });
    for (const page of ["0", "-1", "2.5", "x", "1e3", String(MAX_PAGE + 1), "99999999"]) expect(readState(`?page=${page}`).page, page).toBe(1);
    expect(readState(`?page=${MAX_PAGE}`).page).toBe(MAX_PAGE);
    expect(readState("?mode=vector&ratio=0.25")).toMatchObject({ mode: "vector", ratio: 0.25 });
    expect(readState("?mode=nonsense&ratio=2")).toEqual({ index: "", q: "", filter: "", page: 1 });
  });

  it("writes only what differs from the defaults, and never anything else (no key)", () => {
    expect(writeState({ index: "", q: "", filter: "", page: 1 })).toBe("");
    expect(writeState({ index: "idx_a", q: "a b", filter: "", page: 1, mode: "hybrid" })).toBe("?index=idx_a&q=a+b");
    expect(writeState({ index: "n", q: "🎆 café", filter: 'x:"&=?#"', page: 2, mode: "lexical", ratio: 0 })).toBe("?index=n&q=%F0%9F%8E%86+caf%C3%A9&filter=x%3A%22%26%3D%3F%23%22&page=2&mode=lexical&ratio=0");
  });

  it("round-trips any state", () => {
    const state = fc.record({
      index: fc.string(),
      q: fc.string({ unit: "grapheme" }),
      filter: fc.string({ unit: "grapheme" }),
      page: fc.integer({ min: 1, max: MAX_PAGE }),
    });
    fc.assert(
      fc.property(state, (given: PageState) => {
        expect(readState(writeState(given))).toEqual(given);
      }),
    );
  });

  it("turns a page into the API's offset and parameters", () => {
    expect(offsetOf(1)).toBe(0);
    expect(offsetOf(3)).toBe(20);
    expect(offsetOf(MAX_PAGE)).toBeLessThanOrEqual(9_999);
    const params = searchParams({ index: "x", q: "plants", filter: " ", page: 2, mode: "vector", ratio: 0.5 }, "*");
    expect(Object.fromEntries(params)).toEqual({ query: "plants", limit: "10", offset: "10", object_fields: "*", result_fields: "highlights,score,explain", highlights_rank: "false", mode: "vector", semantic_ratio: "0.5" });
    expect(searchParams({ index: "x", q: "a", filter: "year:1", page: 1 }, "title").get("filter_query")).toBe("year:1");
  });
});
