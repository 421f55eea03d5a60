import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_SEGMENT_CHARS, segmentText } from "../../../src/engine/indexing/segment.js";

const texts = (text: string, delimiter?: RegExp) => segmentText(text, delimiter).map((s) => s.text);

describe("segmentText", () => {
  it("ends a segment at a full stop followed by space, or at a newline", () => {
    expect(texts("First one. Second one.\nThird line\n\nFourth.")).toEqual(["First one.", "Second one.", "Third line", "Fourth."]);
  });
  it("keeps decimals and dotted words whole", () => {
    expect(texts("Dose was 3.5 mg. See fig.2 for more")).toEqual(["Dose was 3.5 mg.", "See fig.2 for more"]);
  });
  it("starts a new segment at each match of a custom delimiter", () => {
    expect(texts("Para one. Still one.\n\nPara two.\nline", /\n\n/)).toEqual(["Para one. Still one.", "Para two.\nline"]);
  });
  it("drops empty and white-space-only segments", () => {
    expect(texts("  \n . \n\n")).toEqual(["."]);
    expect(texts("")).toEqual([]);
  });
  it("cuts long segments at word boundaries within the maximum", () => {
    const long = "word ".repeat(300).trim();
    const segments = segmentText(long);
    expect(segments.length).toBeGreaterThan(2);
    for (const s of segments) expect(s.text.length).toBeLessThanOrEqual(MAX_SEGMENT_CHARS);
    expect(segments.map((s) => s.text).join(" ")).toBe(long);
  });
  it("offsets are UTF-16 indices: emoji and combining characters round-trip", () => {
    const text = "Café 😀 au lait. Nai\u0308ve 👩‍👩‍👧 family.\nEnd";
    for (const s of segmentText(text)) expect(text.slice(s.start, s.end)).toBe(s.text);
    expect(texts(text)).toEqual(["Café 😀 au lait.", "Nai\u0308ve 👩‍👩‍👧 family.", "End"]);
  });
  it("never splits a surrogate pair when cutting", () => {
    const text = "😀".repeat(400);
    for (const s of segmentText(text, undefined, 101)) {
      expect(text.slice(s.start, s.end)).toBe(s.text);
      expect(s.text.length % 2).toBe(0);
    }
  });
  it("property: every segment is the slice at its offsets, in order, non-overlapping, trimmed", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 400 }), fc.boolean(), (text, custom) => {
        const segments = segmentText(text, custom ? /;/ : undefined, 60);
        let last = 0;
        for (const s of segments) {
          expect(text.slice(s.start, s.end)).toBe(s.text);
          expect(s.start).toBeGreaterThanOrEqual(last);
          expect(s.text).toBe(s.text.trim());
          expect(s.text.length).toBeGreaterThan(0);
          last = s.end;
        }
      }),
      { numRuns: 300 },
    );
  });
});
