import { describe, expect, it } from "vitest";
import { parseSmart } from "../../../src/eval/collections.js";
import { meanMetrics, mrrAt, ndcgAt, recallAt } from "../../../src/eval/metrics.js";

const judgments = new Map([
  ["a", 3],
  ["b", 1],
]);

describe("ranking metrics", () => {
  it("nDCG is 1 for the ideal order and lower otherwise", () => {
    expect(ndcgAt(["a", "b", "x"], judgments, 10)).toBeCloseTo(1);
    const swapped = (1 / 1 + 3 / Math.log2(3)) / (3 + 1 / Math.log2(3));
    expect(ndcgAt(["b", "a"], judgments, 10)).toBeCloseTo(swapped);
    expect(ndcgAt(["x", "y"], judgments, 10)).toBe(0);
    expect(ndcgAt(["x", "a"], judgments, 1)).toBe(0);
  });
  it("recall counts relevant documents found within k", () => {
    expect(recallAt(["a", "x", "b"], judgments, 2)).toBe(0.5);
    expect(recallAt(["a", "x", "b"], judgments, 3)).toBe(1);
    expect(recallAt(["a"], new Map(), 3)).toBe(0);
  });
  it("MRR is the reciprocal rank of the first relevant document", () => {
    expect(mrrAt(["x", "b", "a"], judgments, 10)).toBe(0.5);
    expect(mrrAt(["x", "y"], judgments, 10)).toBe(0);
    expect(mrrAt(["x", "y", "a"], judgments, 2)).toBe(0);
  });
  it("averages per-query metrics", () => {
    const m = meanMetrics([
      { ndcg10: 1, recall1: 1, recall5: 1, recall10: 1, recall100: 1, mrr10: 1 },
      { ndcg10: 0, recall1: 0, recall5: 0.5, recall10: 0.5, recall100: 1, mrr10: 0 },
    ]);
    expect(m).toEqual({ ndcg10: 0.5, recall1: 0.5, recall5: 0.75, recall10: 0.75, recall100: 1, mrr10: 0.5 });
  });
});

describe("SMART format", () => {
  it("reads records and multi-line fields", () => {
    const records = parseSmart(".I 001\n.T\nA title\n.W\nfirst line\n  second line\n.I 2\n.W\nx\n");
    expect(records).toEqual([
      { id: "1", fields: { T: "A title", W: "first line second line" } },
      { id: "2", fields: { W: "x" } },
    ]);
  });
});
