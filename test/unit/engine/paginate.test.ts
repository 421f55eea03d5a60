import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_RESULTS, VECTOR_CANDIDATES } from "../../../src/engine/search/limits.js";
import { hybridTotal, neuralTotal, neuralWindow, paginate } from "../../../src/engine/search/paginate.js";

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
    expect(neuralTotal(0, 10, 250, 250)).toEqual({ total: 250, exact: false });
    expect(neuralTotal(240, 10, 260, 260)).toEqual({ total: 250, exact: false });
    expect(neuralTotal(250, 10, 270, 270)).toEqual({ total: 260, exact: false });
  });
  it("is exact when fewer neighbours exist than were asked for", () => {
    expect(neuralTotal(0, 10, 250, 42)).toEqual({ total: 42, exact: true });
  });
});

/** Walks pages the way a client does: follow `next` until it is absent. */
function walk(size: number, limit: number, neural: boolean) {
  const ranked = Array.from({ length: Math.min(size, MAX_RESULTS) }, (_, i) => i);
  const seen: number[] = [];
  const totals: { total: number; exact: boolean }[] = [];
  let offset = 0;
  let pageLimit = limit;
  let pages = 0;
  // A walk over n results must end within ceil(n / limit) pages (plus the first): more means a loop.
  const bound = Math.ceil(ranked.length / limit) + 1;
  for (;;) {
    if (++pages > bound) throw new Error(`the walk did not end within ${bound} pages (size ${size}, limit ${limit}, neural ${neural})`);
    let available: number;
    let estimate;
    if (neural) {
      const want = neuralWindow(offset, pageLimit);
      available = Math.min(want, ranked.length);
      estimate = neuralTotal(offset, pageLimit, want, available);
    } else {
      available = ranked.length;
      estimate = { total: ranked.length, exact: true };
    }
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
  return { seen, totals, ranked, pages };
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
      fc.property(fc.integer({ min: 0, max: 1200 }), fc.integer({ min: 1, max: 120 }), fc.boolean(), (size, limit, neural) => {
        const { seen, totals, ranked, pages } = walk(size, limit, neural);
        expect(seen).toEqual(ranked);
        if (!neural) expect(pages).toBe(Math.max(1, Math.ceil(ranked.length / limit)));
        for (const { total, exact } of totals) {
          if (exact) expect(seen.length).toBe(total);
          else expect(seen.length).toBeGreaterThanOrEqual(total);
        }
      }),
      { numRuns: 300 },
    );
  });
});
