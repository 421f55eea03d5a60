import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { boundaryAtOrAfter, boundaryAtOrBefore, highlightView, shortValue, type TextHighlight } from "../../../src/ui/marks.js";

function highlight(field: string, text: string, start: number, end = start + text.length): TextHighlight {
  return { highlight_type: "text", references: [{ source: field, position: { start_char: start, end_char: end } }], highlight: { text } };
}

const graphemes = (text: string) => [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(text)].map((segment) => segment.index);

describe("highlights drawn from their offsets", () => {
  it("marks the span at UTF-16 offsets, emoji and combining marks before it", () => {
    const body = "Fireworks 🎆🎆 lit the harbour. The cafe\u0301 served cre\u0300me bru\u0302le\u0301e 👩‍👩‍👧. More.";
    const start = body.indexOf("The");
    const end = body.indexOf(" More");
    const view = highlightView(highlight("body", body.slice(start, end), start, end), { body });
    expect(view).toEqual({ source: "body", before: "Fireworks 🎆🎆 lit the harbour. ", marked: body.slice(start, end), after: " More.", cutBefore: false, cutAfter: false });
  });

  it("shows the highlight's own text, all marked, when the field is not there or does not match its offsets", () => {
    const h = highlight("body", "plants", 4);
    const whole = { source: "body", before: "", marked: "plants", after: "", cutBefore: false, cutAfter: false };
    expect(highlightView(h, {})).toEqual(whole);
    expect(highlightView(h, { body: 42 })).toEqual(whole);
    expect(highlightView(h, { body: "a plants" })).toEqual(whole); // offsets one off
    expect(highlightView(highlight("body", "plants", 4, 400), { body: "the plants" })).toEqual(whole);
    expect(highlightView({ ...h, references: [] }, { body: "the plants" })).toEqual({ ...whole, source: null });
    expect(highlightView(highlight("constructor", "x", 0), {})).toEqual({ ...whole, source: "constructor", marked: "x" });
  });

  it("cuts long context at a space near the limit, with an ellipsis flag", () => {
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
    const start = words.indexOf("word30");
    const view = highlightView(highlight("body", "word30", start), { body: words }, 40);
    expect(view.cutBefore && view.cutAfter).toBe(true);
    expect(view.before.startsWith("word")).toBe(true);
    expect(view.after.endsWith(" ") || /word\d+$/.test(view.after)).toBe(true);
    expect(view.before.length).toBeLessThanOrEqual(40);
    expect(view.after.length).toBeLessThanOrEqual(41);
  });

  it("never cuts inside a character: surrogate pairs, combining marks, emoji sequences", () => {
    const piece = fc.constantFrom("a", " ", "e\u0301", "🎆", "👩‍👩‍👧", "🇫🇷", "n\u0303\u0323", "字", ".");
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 120 }), fc.nat(), fc.nat(), fc.integer({ min: 0, max: 40 }), (pieces, a, b, context) => {
        const field = pieces.join("");
        const bounds = graphemes(field);
        const [s, e] = [bounds[a % bounds.length]!, bounds[b % bounds.length]!].sort((x, y) => x - y) as [number, number];
        const view = highlightView(highlight("f", field.slice(s, e), s, e), { f: field }, context);
        expect(view.marked).toBe(field.slice(s, e));
        const from = s - view.before.length;
        const to = e + view.after.length;
        expect(field.slice(from, to)).toBe(view.before + view.marked + view.after);
        expect(from === 0 || bounds.includes(from)).toBe(true);
        expect(to === field.length || bounds.includes(to)).toBe(true);
        expect(view.cutBefore).toBe(from > 0);
        expect(view.cutAfter).toBe(to < field.length);
      }),
    );
  });

  it("finds character boundaries either side of an index", () => {
    const text = "ab🎆e\u0301c";
    expect(boundaryAtOrBefore(text, 3)).toBe(2);
    expect(boundaryAtOrAfter(text, 3)).toBe(4);
    expect(boundaryAtOrBefore(text, 5)).toBe(4);
    expect(boundaryAtOrAfter(text, 5)).toBe(6);
    expect(boundaryAtOrBefore(text, -3)).toBe(0);
    expect(boundaryAtOrAfter(text, 99)).toBe(text.length);
  });

  it("shortens a value at a character boundary", () => {
    expect(shortValue("short")).toEqual({ text: "short", cut: false });
    expect(shortValue({ a: [1, 2] })).toEqual({ text: '{"a":[1,2]}', cut: false });
    expect(shortValue("ab🎆cd", 3)).toEqual({ text: "ab", cut: true });
  });
});
