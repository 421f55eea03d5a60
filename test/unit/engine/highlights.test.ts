import { describe, expect, it } from "vitest";
import { combineSegments, groupByObject, rankByHighlights, relevantSegments, toTextHighlight, type SegmentHit } from "../../../src/engine/search/highlights.js";

const hit = (objectId: string, field: string, position: number, start: number, end: number, score: number): SegmentHit => ({
  objectId,
  field,
  position,
  start,
  end,
  score,
});

describe("combineSegments", () => {
  it("joins consecutive segments of a field into one span scoring its best segment", () => {
    expect(combineSegments([hit("o", "body", 2, 20, 30, 0.4), hit("o", "body", 1, 10, 19, 0.9)])).toEqual([
      { field: "body", start: 10, end: 30, score: 0.9 },
    ]);
  });
  it("keeps separate spans for gaps and for other fields, best first", () => {
    const spans = combineSegments([hit("o", "body", 0, 0, 5, 0.2), hit("o", "body", 3, 40, 50, 0.7), hit("o", "title", 0, 0, 8, 0.5)]);
    expect(spans).toEqual([
      { field: "body", start: 40, end: 50, score: 0.7 },
      { field: "title", start: 0, end: 8, score: 0.5 },
      { field: "body", start: 0, end: 5, score: 0.2 },
    ]);
  });
  it("joins overlapping segments", () => {
    expect(combineSegments([hit("o", "b", 0, 0, 10, 0.1), hit("o", "b", 5, 8, 12, 0.3)])).toEqual([{ field: "b", start: 0, end: 12, score: 0.3 }]);
  });
  it("joins segments that touch (one starts where the other ends) though their positions are not consecutive", () => {
    expect(combineSegments([hit("o", "b", 0, 0, 10, 0.1), hit("o", "b", 5, 10, 12, 0.3)])).toEqual([{ field: "b", start: 0, end: 12, score: 0.3 }]);
    expect(combineSegments([hit("o", "b", 0, 0, 10, 0.1), hit("o", "b", 5, 11, 12, 0.3)])).toHaveLength(2);
  });
  it("a span covers every segment it joins, even one that starts before the segment before it", () => {
    expect(combineSegments([hit("o", "b", 3, 10, 20, 0.1), hit("o", "b", 4, 5, 12, 0.3)])).toEqual([{ field: "b", start: 5, end: 20, score: 0.3 }]);
  });
});

describe("ranking by highlights", () => {
  it("ranks objects by their best highlight, then the rest of the regular ranking", () => {
    const groups = groupByObject([hit("b", "t", 0, 0, 1, 0.5), hit("c", "t", 0, 0, 1, 0.9), hit("b", "t", 1, 2, 3, 0.95)]);
    const regular = [{ id: "a", score: 1 }, { id: "c", score: 0.5 }, { id: "d", score: 0.4 }, { id: "b", score: 0.1 }];
    expect(rankByHighlights(groups, regular).map((item) => item.id)).toEqual(["b", "c", "a", "d"]);
  });
});

describe("toTextHighlight", () => {
  it("has exactly the spec's shape and the field's slice as text", () => {
    const text = "Intro. The key finding here. Outro.";
    expect(toTextHighlight({ field: "body", start: 7, end: 28, score: 1 }, text)).toEqual({
      highlight_type: "text",
      references: [{ source: "body", position: { start_char: 7, end_char: 28 } }],
      highlight: { text: "The key finding here." },
    });
  });
});

describe("relevantSegments", () => {
  it("keeps the upper half of the score range", () => {
    const scored = [0.9, 0.8, 0.5, 0.49, 0.1].map((score, i) => ({ id: String(i), score }));
    expect(relevantSegments(scored).map((s) => s.score)).toEqual([0.9, 0.8, 0.5]);
    expect(relevantSegments([{ id: "x", score: 0.3 }])).toHaveLength(1);
    expect(relevantSegments([])).toEqual([]);
  });
});
