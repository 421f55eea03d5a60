import { describe, expect, it } from "vitest";
import { compareRanked, fuseWeighted, normaliseByMax, normaliseMinMax } from "../../../src/engine/search/fuse.js";

const s = (id: string, score: number) => ({ id, score });

describe("normalisation", () => {
  it("divides by the maximum, guarding a zero maximum", () => {
    expect(normaliseByMax([s("a", 4), s("b", 2)])).toEqual([s("a", 1), s("b", 0.5)]);
    expect(normaliseByMax([s("a", 0)])).toEqual([s("a", 0)]);
    expect(normaliseByMax([])).toEqual([]);
  });
  it("min-max scales, all-equal scores becoming 1", () => {
    expect(normaliseMinMax([s("a", 1), s("b", 0.5), s("c", 0.75)])).toEqual([s("a", 1), s("b", 0), s("c", 0.5)]);
    expect(normaliseMinMax([s("a", 0.3), s("b", 0.3)])).toEqual([s("a", 1), s("b", 1)]);
  });
});

describe("fuseWeighted", () => {
  it("is the union of both lists, weighted", () => {
    const fused = fuseWeighted([s("a", 10), s("b", 5)], [s("b", 0.9), s("c", 0.5)], 0.3);
    expect(fused.map((f) => f.id)).toEqual(["a", "b", "c"]);
    expect(fused[0]?.score).toBeCloseTo(0.7);
    expect(fused[1]?.score).toBeCloseTo(0.35 + 0.3);
    expect(fused[2]?.score).toBeCloseTo(0);
  });
  it("weight 0 keeps the lexical order, weight 1 the vector order", () => {
    const lexical = [s("a", 3), s("b", 2), s("c", 1)];
    const vector = [s("c", 0.9), s("b", 0.8), s("a", 0.1)];
    expect(fuseWeighted(lexical, vector, 0).map((f) => f.id)).toEqual(["a", "b", "c"]);
    expect(fuseWeighted(lexical, vector, 1).map((f) => f.id)).toEqual(["c", "b", "a"]);
  });
  it("breaks ties by id so that the order is stable", () => {
    expect([s("b", 1), s("a", 1), s("c", 2)].sort(compareRanked).map((f) => f.id)).toEqual(["c", "a", "b"]);
  });
  it("handles an empty lexical side (no term matched)", () => {
    expect(fuseWeighted([], [s("x", 0.8), s("y", 0.2)]).map((f) => f.id)).toEqual(["x", "y"]);
  });
});

describe("fusion with rescored lexical matches", () => {
  it("gives a lexical match outside the nearest set the vector evidence of its exact cosine", () => {
    // "b" and "c" tie lexically; "b" was rescored with a high cosine, "c" with a low one.
    const lexical = [s("a", 4), s("b", 2), s("c", 2)];
    const cosine = [s("z", 0.9), s("a", 0.2), s("b", 0.8), s("c", 0.1)];
    const fused = fuseWeighted(lexical, cosine, 0.4);
    expect(fused.map((f) => f.id)).toEqual(["a", "b", "z", "c"]);
    expect(fused.find((f) => f.id === "c")?.score).toBeCloseTo(0.6 * 0.5);
  });
});
