import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_RESULTS, VECTOR_CANDIDATES } from "../../../src/engine/search/limits.js";
import { hybridTotal, neuralTotal, neuralWindow, pageTotal, paginate, type TotalEstimate } from "../../../src/engine/search/paginate.js";

describe("paginate", () => {
  it("page 10 of limit 10 is offset 90 (rule 4)", () => {
    expect(paginate(90, 10, 200, { total: 200, exact: true })).toEqual({
      pages: 20,
      page: 10,
      next: { offset: 100, limit: 10 },
      statistics: { total: 200, total_calculation: "exact" },
    });
  });

  it("a short final page gets a smaller next.limit, and the last page has no next (rule 3)", () => {
    expect(paginate(10, 10, 25, { total: 25, exact: true }).next).toEqual({ offset: 20, limit: 5 });
    expect(paginate(20, 10, 25, { total: 25, exact: true })).toEqual({
      pages: 3,
      page: 3,
      statistics: { total: 25, total_calculation: "exact" },
    });
  });

  it("a page past the end has no next", () => {
    const p = paginate(500, 10, 25, { total: 25, exact: true });
    expect(p.page).toBe(51);
    expect(p.next).toBeUndefined();
  });

  it("no results: zero pages, page 1", () => {
    expect(paginate(0, 10, 0, { total: 0, exact: true })).toEqual({
      pages: 0,
      page: 1,
      statistics: { total: 0, total_calculation: "exact" },
    });
  });

  it("an offset that is not a multiple of the limit is on the page that holds it", () => {
    expect(paginate(15, 10, 100, { total: 100, exact: true }).page).toBe(2);
  });

  it("a minimum total shows as such", () => {
    expect(paginate(0, 10, 300, { total: 250, exact: false }).statistics.total_calculation).toBe("minimum");
  });
});

describe("hybridTotal (rule 7)", () => {
  it("is the greater of the two counts", () => {
    expect(hybridTotal(250, 40, 250, false)).toEqual({ total: 250, exact: true });
    expect(hybridTotal(250, 900, 1000, false)).toEqual({ total: 900, exact: false });
  });
  it("is capped at 10,000", () => {
    expect(hybridTotal(250, MAX_RESULTS, MAX_RESULTS, true)).toEqual({ total: MAX_RESULTS, exact: false });
    expect(hybridTotal(12_000, 250, MAX_RESULTS, false)).toEqual({ total: MAX_RESULTS, exact: true });
    expect(hybridTotal(250, 12_000, MAX_RESULTS, true)).toEqual({ total: MAX_RESULTS, exact: false });
  });
  it("is a minimum when the fused union is larger than the greater count", () => {
    expect(hybridTotal(20, 10, 25, false)).toEqual({ total: 20, exact: false });
  });
});

describe("neural-only totals (rules 8, 10)", () => {
  it("fetch at least the first vector set, and enough for the next page", () => {
    expect(neuralWindow(0, 10)).toBe(VECTOR_CANDIDATES);
    expect(neuralWindow(300, 50)).toBe(400);
    expect(neuralWindow(9990, 1000)).toBe(MAX_RESULTS);
  });
  it("starts at 250, minimum, and grows once the offset passes it", () => {
    const page = (offset: number, limit: number) => {
      const want = neuralWindow(offset, limit);
      return pageTotal(neuralTotal(want, want), offset, limit, want, false);
    };
    expect(neuralTotal(250, 250)).toEqual({ total: 250, exact: false });
    expect(page(0, 10)).toEqual({ total: 250, exact: false });
    expect(page(240, 10)).toEqual({ total: 250, exact: false });
    expect(page(250, 10)).toEqual({ total: 260, exact: false });
  });
  it("is exact when fewer neighbours exist than were asked for", () => {
    expect(neuralTotal(250, 42)).toEqual({ total: 42, exact: true });
    expect(pageTotal(neuralTotal(250, 42), 0, 10, 42, true)).toEqual({ total: 42, exact: true });
  });
});

describe("pageTotal (rule 10: a minimum grows with the page, in every mode)", () => {
  const first: TotalEstimate = { total: 280, exact: false };
  it("leaves the first total while the page is within it", () => {
    expect(pageTotal(first, 0, 10, 285, true)).toEqual(first);
    expect(pageTotal(first, 260, 10, 285, true)).toEqual(first);
    expect(pageTotal(first, 270, 10, 285, true)).toEqual(first);
  });
  it("grows to offset + results once the page goes past it", () => {
    expect(pageTotal(first, 271, 10, 285, true)).toEqual({ total: 281, exact: false });
    expect(pageTotal(first, 270, 10, 10_000, false)).toEqual({ total: 280, exact: false });
    expect(pageTotal(first, 280, 10, 10_000, false)).toEqual({ total: 290, exact: false });
  });
  it("is exact when the results run out on the page, or the page ends at the last one, of a whole list", () => {
    // the issue: offset 280 of a list of 285 with a first total of 280 (minimum) answered 280, minimum
    expect(pageTotal(first, 280, 10, 285, true)).toEqual({ total: 285, exact: true });
    expect(pageTotal(first, 275, 10, 285, true)).toEqual({ total: 285, exact: true });
    expect(pageTotal(first, 276, 10, 285, true)).toEqual({ total: 285, exact: true });
    expect(pageTotal(first, 274, 10, 285, true)).toEqual({ total: 284, exact: false });
    // a page past the end: the results there are, not the offset
    expect(pageTotal(first, 500, 10, 285, true)).toEqual({ total: 285, exact: true });
    // a first page that holds the whole list
    expect(pageTotal(first, 0, 1000, 285, true)).toEqual({ total: 285, exact: true });
  });
  it("stays a minimum at the end of a list that was cut (more may exist)", () => {
    expect(pageTotal(first, 280, 10, 285, false)).toEqual({ total: 285, exact: false });
    expect(pageTotal({ total: 9_000, exact: false }, 9_995, 10, MAX_RESULTS, false)).toEqual({ total: MAX_RESULTS, exact: false });
  });
  it("an offset exactly at the first total grows it by the page", () => {
    expect(pageTotal({ total: 250, exact: false }, 250, 10, 253, true)).toEqual({ total: 253, exact: true });
    expect(pageTotal({ total: 250, exact: false }, 250, 10, 1_000, false)).toEqual({ total: 260, exact: false });
    expect(pageTotal({ total: 250, exact: false }, 250, 3, 1_000, true)).toEqual({ total: 253, exact: false });
  });
  it("is capped at 10,000, even when a list (highlights added to it) holds more", () => {
    expect(pageTotal({ total: 9_900, exact: false }, 9_999, 1000, 10_100, true)).toEqual({ total: MAX_RESULTS, exact: false });
    expect(pageTotal({ total: 9_900, exact: false }, 9_990, 10, MAX_RESULTS, true)).toEqual({ total: MAX_RESULTS, exact: true });
    expect(pageTotal({ total: 9_900, exact: false }, 9_989, 10, MAX_RESULTS, true)).toEqual({ total: 9_999, exact: false });
  });
  it("leaves an exact total as it is", () => {
    expect(pageTotal({ total: 42, exact: true }, 40, 10, 42, true)).toEqual({ total: 42, exact: true });
    expect(pageTotal({ total: 1000, exact: true }, 990, 1000, 1000, false)).toEqual({ total: 1000, exact: true });
  });
});

type Mode = "exact" | "neural" | "hybrid";

/**
 * Walks pages the way a client does: follow `next` until it is absent. A hybrid list of `size`
 * results has a first total below it (rule 7: the greater of its two parts), a minimum.
 */
function walk(size: number, limit: number, mode: Mode, hybridFirst = Math.ceil(size / 2)) {
  const ranked = Array.from({ length: Math.min(size, MAX_RESULTS) }, (_, i) => i);
  const seen: number[] = [];
  const totals: { total: number; exact: boolean }[] = [];
  const totalsAt: { offset: number; results: number; total: number; exact: boolean }[] = [];
  let offset = 0;
  let pageLimit = limit;
  let pages = 0;
  // A walk over n results must end within ceil(n / limit) pages (plus the first): more means a loop.
  const bound = Math.ceil(ranked.length / limit) + 1;
  for (;;) {
    if (++pages > bound) throw new Error(`the walk did not end within ${bound} pages (size ${size}, limit ${limit}, ${mode})`);
    let available: number;
    let estimate;
    if (mode === "neural") {
      const want = neuralWindow(offset, pageLimit);
      available = Math.min(want, ranked.length);
      estimate = pageTotal(neuralTotal(want, available), offset, pageLimit, available, available < want);
    } else if (mode === "hybrid") {
      available = ranked.length;
      const first = Math.min(hybridFirst, size, MAX_RESULTS);
      estimate = pageTotal({ total: first, exact: first === size }, offset, pageLimit, available, size <= MAX_RESULTS);
    } else {
      available = ranked.length;
      estimate = { total: ranked.length, exact: true };
    }
    totalsAt.push({ offset, results: ranked.slice(offset, offset + pageLimit).length, ...estimate });
    seen.push(...ranked.slice(offset, offset + pageLimit));
    totals.push(estimate);
    const p = paginate(offset, pageLimit, available, estimate);
    if (!p.next) break;
    expect(p.next.limit).toBeLessThanOrEqual(limit);
    expect(p.next.limit).toBeGreaterThanOrEqual(1);
    expect(p.next.offset).toBe(offset + pageLimit);
    offset = p.next.offset;
    pageLimit = p.next.limit;
  }
  return { seen, totals, totalsAt, ranked, pages };
}

describe("page counts", () => {
  it("pages = ceil(total / limit): enough pages for every result, and no empty last page", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 1, max: 1000 }), (total, limit) => {
        const { pages } = paginate(0, limit, total, { total, exact: true });
        expect(pages * limit).toBeGreaterThanOrEqual(total);
        expect(Math.max(pages - 1, 0) * limit).toBeLessThan(Math.max(total, 1));
      }),
      { numRuns: 500 },
    );
    expect(paginate(0, 10, 21, { total: 21, exact: true }).pages).toBe(3);
    expect(paginate(0, 10, 20, { total: 20, exact: true }).pages).toBe(2);
  });

  it("the page that ends exactly at the last result has no next", () => {
    expect(paginate(10, 10, 20, { total: 20, exact: true }).next).toBeUndefined();
    expect(paginate(0, 20, 20, { total: 20, exact: true }).next).toBeUndefined();
    expect(paginate(0, 10, 20, { total: 20, exact: true }).next).toEqual({ offset: 10, limit: 10 });
  });
});

describe("paging invariant", () => {
  it("every retrievable result exactly once, no gaps; count >= total (minimum) or == total (exact)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1200 }), fc.integer({ min: 1, max: 120 }), fc.constantFrom<Mode>("exact", "neural", "hybrid"), fc.nat(1200), (size, limit, mode, first) => {
        const { seen, totals, totalsAt, ranked, pages } = walk(size, limit, mode, first);
        expect(seen).toEqual(ranked);
        if (mode !== "neural") expect(pages).toBe(Math.max(1, Math.ceil(ranked.length / limit)));
        for (const { total, exact } of totals) {
          if (exact) expect(seen.length).toBe(total);
          else expect(seen.length).toBeGreaterThanOrEqual(total);
        }
        // rule 10: a page's total covers the results up to its end, and the last page of a whole list knows the end
        for (const { offset, results, total } of totalsAt) expect(total).toBeGreaterThanOrEqual(offset + results);
        expect(totals.at(-1)).toEqual({ total: seen.length, exact: true });
      }),
      { numRuns: 300 },
    );
  });

  it("past 10,000 results (a cut list): every page to the cap, the total capped and a minimum", () => {
    for (const mode of ["neural", "hybrid"] as const) {
      const { seen, totals, totalsAt } = walk(12_000, 1000, mode, 9_500);
      expect(seen.length).toBe(MAX_RESULTS);
      for (const { offset, results, total } of totalsAt) expect(total).toBeGreaterThanOrEqual(offset + results);
      expect(totals.at(-1)).toEqual({ total: MAX_RESULTS, exact: false });
    }
  });
});
