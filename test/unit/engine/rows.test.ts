import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareRanked } from "../../../src/engine/search/fuse.js";
import { byScore, cosines, RowIndex, scoredIds, squaredNorm, withTopFirst, type ScoredRows } from "../../../src/engine/store/rows.js";

const rowsOf = (items: [string, number][]): ScoredRows => ({ ids: items.map(([id]) => id), scores: Float64Array.from(items, ([, score]) => score), rows: Float64Array.from(items, (_, i) => i * 10) });

describe("withTopFirst", () => {
  it("puts a run of equal scores across the cut in id order, each row id with its row", () => {
    const ordered = withTopFirst(rowsOf([["c", 3], ["b", 2], ["d", 2], ["a", 2], ["e", 1]]), 2);
    expect(ordered.ids).toEqual(["c", "a", "b", "d", "e"]);
    expect(Array.from(ordered.rows as Float64Array)).toEqual([0, 30, 10, 20, 40]);
  });
  it("takes in a run of equal scores that starts at the top, from its first row", () => {
    expect(withTopFirst(rowsOf([["b", 2], ["a", 2], ["c", 2], ["d", 1]]), 1).ids).toEqual(["a", "b", "c", "d"]);
    expect(withTopFirst(rowsOf([["b", 2], ["a", 2], ["c", 1]]), 1).ids).toEqual(["a", "b", "c"]);
    expect(withTopFirst(rowsOf([["c", 5], ["b", 5], ["a", 5]]), 2).ids).toEqual(["a", "b", "c"]);
  });
  it("returns the rows as they are when the cut falls between scores, in id order already, or past the end", () => {
    const rows = rowsOf([["b", 3], ["z", 2], ["y", 2], ["a", 1], ["c", 1]]);
    expect(withTopFirst(rows, 1)).toBe(rows);
    expect(withTopFirst(rows, 3)).toBe(rows);
    expect(withTopFirst(rows, 5)).toBe(rows);
    expect(withTopFirst(rowsOf([["b", 3], ["a", 2], ["c", 2]]), 2).ids).toEqual(["b", "a", "c"]);
  });
  it("takes the first n by score, then id, from any list, and is settled after one pass", () => {
    fc.assert(
      fc.property(
        // few scores and mostly small cuts: runs of equal scores at the top and across the cut are common
        fc.uniqueArray(fc.tuple(fc.string({ maxLength: 3 }), fc.oneof(fc.constantFrom(1, 2), fc.constantFrom(0, 1, 1.5, 2, 7))), { selector: ([id]) => id, maxLength: 40 }),
        fc.boolean(),
        fc.oneof(fc.nat(6), fc.nat(45)),
        (items, presorted, n) => {
          if (presorted) items.sort((a, b) => b[1] - a[1]);
          const rows = rowsOf(items);
          const taken = withTopFirst(rows, n);
          const expected = scoredIds(rows).sort(compareRanked).slice(0, Math.min(n, items.length));
          expect(scoredIds(taken).slice(0, n).sort(compareRanked)).toEqual(n >= items.length ? scoredIds(rows).sort(compareRanked) : expected);
          expect(withTopFirst(taken, n)).toBe(taken);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("cosines", () => {
  it("is the cosine of the query to each row, 0 for a zero vector, NaN for a row without one", () => {
    const data = Float32Array.of(1, 1, 0, 1, 1, 1, 3, 4, 0, 0, 0, 0);
    const offsets = Int32Array.of(0, 3, -1, 6, 9);
    const norms = Float64Array.from(offsets, (start) => (start < 0 ? 0 : squaredNorm(data, start, 3)));
    const out = cosines(Float32Array.of(1, 0, 0), { dimension: 3, data, offsets, norms });
    expect(out[0]).toBeCloseTo(1 / Math.SQRT2, 12);
    expect(out[1]).toBeCloseTo(1 / Math.sqrt(3), 12);
    expect(out[2]).toBeNaN();
    expect(out[3]).toBeCloseTo(0.6, 12);
    expect(out[4]).toBe(0);
  });
});

describe("byScore", () => {
  it("orders positions by descending score, equal scores in position order, leaving out NaN (rows without a vector)", () => {
    expect(byScore(Float64Array.of(0.5, Number.NaN, 0.9, 0.5, Number.NaN))).toEqual([2, 0, 3]);
    expect(byScore(new Float64Array(0))).toEqual([]);
  });
});

describe("RowIndex", () => {
  it("grows a fragment's positions when an offset is exactly past them", () => {
    const index = new RowIndex();
    index.set(0, 0);
    index.set(1024, 1);
    index.set(2048, 2);
    index.set(2 ** 32 + 1024, 3);
    expect([0, 1024, 2048, 2 ** 32 + 1024, 1023, 2 ** 32].map((row) => index.get(row))).toEqual([0, 1, 2, 3, -1, -1]);
  });

  it("maps row ids of several fragments, past 2^32, to positions; -1 for others", () => {
    const index = new RowIndex();
    const row = (fragment: number, offset: number) => fragment * 2 ** 32 + offset;
    index.set(row(0, 5), 0);
    index.set(row(7, 0), 1);
    index.set(row(7, 5000), 2);
    index.set(row(300, 1), 3);
    expect([row(0, 5), row(7, 0), row(7, 5000), row(300, 1)].map((r) => index.get(r))).toEqual([0, 1, 2, 3]);
    expect([row(0, 6), row(7, 4999), row(8, 0), row(7, 10 ** 6)].map((r) => index.get(r))).toEqual([-1, -1, -1, -1]);
  });
});
