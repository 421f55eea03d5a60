import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareRanked, fuseWeighted, rankedCandidates, rankedList, type ScoredId } from "../../../src/engine/search/fuse.js";

const s = (id: string, score: number) => ({ id, score });

/**
 * The fusion as fuse.ts defines it, written plainly (a map by id, then a whole sort): the fast
 * version must give the same list, score for score.
 * @param cosine every candidate's exact cosine: the nearest, and the rescored lexical matches
 */
function reference(lexical: readonly ScoredId[], cosine: readonly ScoredId[], w: number): ScoredId[] {
  const best = lexical.reduce((m, item) => Math.max(m, item.score), 0);
  const fused = new Map<string, number>();
  for (const item of lexical) fused.set(item.id, (1 - w) * (best > 0 ? item.score / best : 0));
  const min = Math.min(...cosine.map((item) => item.score));
  const max = Math.max(...cosine.map((item) => item.score));
  for (const item of cosine) fused.set(item.id, (fused.get(item.id) ?? 0) + w * (max - min > 0 ? (item.score - min) / (max - min) : 1));
  return [...fused].map(([id, score]) => ({ id, score })).sort(compareRanked);
}

/**
 * The fast fusion over lists by id: `nearest` with their cosine, and the cosine of lexical matches
 * rescored (those not among the nearest, by id; the others are ignored, as rank.ts does).
 */
function fused(lexical: readonly ScoredId[], nearest: readonly ScoredId[], rescored: ReadonlyMap<string, number> = new Map(), w = 0.4, keep = 10_000): ScoredId[] {
  const at = new Map(nearest.map((item, k) => [item.id, k]));
  const parts = fuseWeighted(
    {
      lexical: lexical.map((item) => item.score),
      nearest: nearest.map((item) => item.score),
      nearestOf: Int32Array.from(lexical, (item) => at.get(item.id) ?? -1),
      rescored: lexical.map((item) => rescored.get(item.id) ?? Number.NaN),
    },
    w,
  );
  const idOf = (c: number) => (c < lexical.length ? lexical[c] : nearest[parts.nearestOnly[c - lexical.length] as number])?.id as string;
  const ranked = rankedCandidates(parts.scores, idOf, keep);
  return ranked.top(ranked.count);
}

describe("fuseWeighted", () => {
  it("is the union of both lists, weighted", () => {
    const list = fused([s("a", 10), s("b", 5)], [s("b", 0.9), s("c", 0.5)], new Map(), 0.3);
    expect(list.map((f) => f.id)).toEqual(["a", "b", "c"]);
    expect(list[0]?.score).toBeCloseTo(0.7);
    expect(list[1]?.score).toBeCloseTo(0.35 + 0.3);
    expect(list[2]?.score).toBeCloseTo(0);
  });
  it("weight 0 keeps the lexical order, weight 1 the vector order", () => {
    const lexical = [s("a", 3), s("b", 2), s("c", 1)];
    const vector = [s("c", 0.9), s("b", 0.8), s("a", 0.1)];
    expect(fused(lexical, vector, new Map(), 0).map((f) => f.id)).toEqual(["a", "b", "c"]);
    expect(fused(lexical, vector, new Map(), 1).map((f) => f.id)).toEqual(["c", "b", "a"]);
  });
  it("breaks ties by id so that the order is stable", () => {
    expect([s("b", 1), s("a", 1), s("c", 2)].sort(compareRanked).map((f) => f.id)).toEqual(["c", "a", "b"]);
    expect(fused([s("b", 1), s("a", 1), s("c", 2)], []).map((f) => f.id)).toEqual(["c", "a", "b"]);
  });
  it("handles an empty lexical side (no term matched), and an empty vector side", () => {
    expect(fused([], [s("x", 0.8), s("y", 0.2)]).map((f) => f.id)).toEqual(["x", "y"]);
    expect(fused([s("a", 2), s("b", 4)], []).map((f) => f.id)).toEqual(["b", "a"]);
    expect(fused([], [])).toEqual([]);
  });
  it("divides BM25 by a ceiling above the best score when one is given (matches of corrected words)", () => {
    const parts = fuseWeighted({ lexical: [2, 1], lexicalCeiling: 4, nearest: [], nearestOf: Int32Array.from([-1, -1]), rescored: [Number.NaN, Number.NaN] }, 0.4);
    expect([...parts.scores]).toEqual([0.6 * 0.5, 0.6 * 0.25]);
    expect(parts.lexicalBest).toBe(4);
  });
  it("scores no lexical part when every BM25 score is 0, and every cosine 1 when they are all equal", () => {
    expect(fused([s("a", 0), s("b", 0)], [s("a", 0.5), s("c", 0.5)], new Map(), 0.4)).toEqual([s("a", 0.4), s("c", 0.4), s("b", 0)]);
  });
});

describe("fusion with rescored lexical matches", () => {
  it("gives a lexical match outside the nearest set the vector evidence of its exact cosine", () => {
    // "b" and "c" tie lexically; "b" was rescored with a high cosine, "c" with a low one.
    const lexical = [s("a", 4), s("b", 2), s("c", 2)];
    const list = fused(lexical, [s("z", 0.9)], new Map([["a", 0.2], ["b", 0.8], ["c", 0.1]]), 0.4);
    expect(list.map((f) => f.id)).toEqual(["a", "b", "z", "c"]);
    expect(list.find((f) => f.id === "c")?.score).toBeCloseTo(0.6 * 0.5);
  });
  it("takes a nearest object's cosine from the vector part, not from a rescoring of it", () => {
    expect(fused([s("a", 1)], [s("a", 0.9), s("b", 0.1)], new Map([["a", 0.1]]), 1)).toEqual([s("a", 1), s("b", 0)]);
  });
});

describe("the fast fusion against its definition", () => {
  const ids = fc.constantFrom(...Array.from({ length: 40 }, (_, i) => `id${i}`));
  // scores from a few values, so that ties (between candidates and at the cut) are common
  const score = fc.oneof(fc.constantFrom(0, 0.5, 1, 2), fc.double({ min: 0, max: 20, noNaN: true }));
  const cosine = fc.oneof(fc.constantFrom(-0.2, 0, 0.3, 0.9), fc.double({ min: -1, max: 1, noNaN: true }));
  const case_ = fc.record({
    lexical: fc.uniqueArray(fc.record({ id: ids, score }), { selector: (item) => item.id, maxLength: 30 }),
    nearest: fc.uniqueArray(fc.record({ id: ids, score: cosine }), { selector: (item) => item.id, maxLength: 15 }),
    rescoredCosines: fc.array(fc.option(cosine, { nil: undefined }), { maxLength: 30 }),
    depth: fc.nat(30),
    w: fc.constantFrom(0, 0.3, 0.4, 1),
    keep: fc.integer({ min: 1, max: 60 }),
    page: fc.integer({ min: 1, max: 60 }),
  });

  it("gives the same list, scores and order, for any parts, cut and page", () => {
    fc.assert(
      fc.property(case_, ({ lexical, nearest, rescoredCosines, depth, w, keep, page }) => {
        lexical.sort((a, b) => b.score - a.score);
        nearest.sort((a, b) => b.score - a.score);
        const near = new Set(nearest.map((item) => item.id));
        // rank.ts rescores the top `depth` lexical matches that are not among the nearest (some have no vector)
        const rescored = new Map<string, number>();
        lexical.slice(0, depth).forEach((item, i) => {
          const value = rescoredCosines[i];
          if (!near.has(item.id) && value !== undefined) rescored.set(item.id, value);
        });
        const expected = reference(lexical, [...nearest, ...[...rescored].map(([id, value]) => s(id, value))], w).slice(0, keep);
        const list = fused(lexical, nearest, rescored, w, keep);
        expect(list).toEqual(expected);
        // a page read first, then more: each the same prefix
        const at = new Map(nearest.map((item, k) => [item.id, k]));
        const parts = fuseWeighted(
          { lexical: lexical.map((i) => i.score), nearest: nearest.map((i) => i.score), nearestOf: Int32Array.from(lexical, (i) => at.get(i.id) ?? -1), rescored: lexical.map((i) => rescored.get(i.id) ?? Number.NaN) },
          w,
        );
        const ranked = rankedCandidates(parts.scores, (c) => (c < lexical.length ? lexical[c] : nearest[parts.nearestOnly[c - lexical.length] as number])?.id as string, keep);
        expect(ranked.count).toBe(expected.length);
        expect(ranked.top(page)).toEqual(expected.slice(0, page));
        expect(ranked.top(page + 7)).toEqual(expected.slice(0, page + 7));
        expect(ranked.top(0)).toEqual([]);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("rankedList", () => {
  it("reads the first n of a list in order", () => {
    const list = rankedList([s("a", 3), s("b", 2)]);
    expect(list.count).toBe(2);
    expect(list.top(1)).toEqual([s("a", 3)]);
    expect(list.top(5)).toEqual([s("a", 3), s("b", 2)]);
  });
});
