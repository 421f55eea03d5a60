import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { IndexConfiguration } from "../../../src/engine/config.js";
import { ValidationError } from "../../../src/engine/errors.js";
import { segmentDelimiter } from "../../../src/engine/indexing/extract.js";
import {
  compileDelimiter,
  MAX_DELIMITER_LENGTH,
  MAX_DELIMITER_PROGRAM,
  segmentText,
  type Segment,
  type SegmentDelimiter,
} from "../../../src/engine/indexing/segment.js";

/** A custom delimiter, compiled as the worker compiles it (RE2). */
function re2(source: string): SegmentDelimiter {
  const compiled = compileDelimiter(source);
  if (!compiled.ok) throw new Error(compiled.reason);
  return compiled.delimiter;
}

const texts = (text: string, delimiter?: string) => segmentText(text, delimiter === undefined ? undefined : re2(delimiter)).map((s) => s.text);

describe("segmentText", () => {
  it("ends a segment at a full stop followed by space, or at a newline", () => {
    expect(texts("First one. Second one.\nThird line\n\nFourth.")).toEqual(["First one.", "Second one.", "Third line", "Fourth."]);
  });
  it("keeps decimals and dotted words whole", () => {
    expect(texts("Dose was 3.5 mg. See fig.2 for more")).toEqual(["Dose was 3.5 mg.", "See fig.2 for more"]);
  });
  it("starts a new segment at each match of a custom delimiter", () => {
    expect(texts("Para one. Still one.\n\nPara two.\nline", "\n\n")).toEqual(["Para one. Still one.", "Para two.\nline"]);
  });
  it("drops empty and white-space-only segments", () => {
    expect(texts("  \n . \n\n")).toEqual(["."]);
    expect(texts("")).toEqual([]);
  });
  it("keeps a 2,000-character sentence whole: the spec sets no length to a segment (§2.4.4)", () => {
    const sentence = `It ${"rained all day on the quiet harbour and ".repeat(50)}ended.`;
    expect(sentence.length).toBeGreaterThan(2000);
    const text = `Short one. ${sentence} Next one.\nLine`;
    const start = text.indexOf("It rained");
    expect(segmentText(text)).toEqual([
      { start: 0, end: 10, text: "Short one." },
      { start, end: start + sentence.length, text: sentence },
      { start: start + sentence.length + 1, end: start + sentence.length + 10, text: "Next one." },
      { start: start + sentence.length + 11, end: text.length, text: "Line" },
    ]);
  });
  it("keeps a 1 MB text without a full stop or newline whole, one segment", () => {
    const text = "word ".repeat(200_000) + "end";
    expect(segmentText(text)).toEqual([{ start: 0, end: text.length, text }]);
  });
  it("offsets are UTF-16 indices: emoji and combining characters round-trip", () => {
    const text = "Café 😀 au lait. Nai\u0308ve 👩‍👩‍👧 family.\nEnd";
    for (const s of segmentText(text)) expect(text.slice(s.start, s.end)).toBe(s.text);
    expect(texts(text)).toEqual(["Café 😀 au lait.", "Nai\u0308ve 👩‍👩‍👧 family.", "End"]);
  });
  it("keeps a long run of astral characters whole", () => {
    const text = "😀".repeat(400);
    expect(segmentText(text)).toEqual([{ start: 0, end: 800, text }]);
  });
  it("property: every segment is the slice at its offsets, in order, non-overlapping, trimmed", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 400 }), fc.boolean(), (text, custom) => {
        const segments = segmentText(text, custom ? re2(";") : undefined);
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

/** A delimiter that never matches: segmentText then only trims. */
const NEVER = "[^\\x00-\\x{10FFFF}]";

/** The segmentation JavaScript's RegExp gave before delimiters were compiled by RE2: the oracle for patterns both read alike. */
function jsSegments(text: string, pattern: string): Segment[] {
  const bounds: [number, number][] = [];
  let start = 0;
  for (const match of text.matchAll(new RegExp(pattern, "gu"))) {
    if (match[0] === "") continue;
    bounds.push([start, match.index]);
    start = match.index + match[0].length;
  }
  bounds.push([start, text.length]);
  // the same trimming as segmentText, applied to each span
  return bounds.flatMap(([s, e]) => segmentText(text.slice(s, e), re2(NEVER)).map((seg) => ({ start: seg.start + s, end: seg.end + s, text: seg.text })));
}

describe("segmentText with a custom delimiter (RE2)", () => {
  it.each([
    ["😀", "one😀two 😀 three😀", ["one", "two", "three"]],
    ["\\x{1F600}|;", "a😀b;c", ["a", "b", "c"]],
    ["👩‍👩‍👧", "mum 👩‍👩‍👧 kids👩‍👩‍👧end", ["mum", "kids", "end"]],
    ["e\\x{301}", "cafe\u0301 au lait e\u0301 fin", ["caf", "au lait", "fin"]],
    ["[.!?]+ ", "Wow!! Really? Yes. 𝒳 done", ["Wow", "Really", "Yes", "𝒳 done"]],
    ["\\p{Lu}{2,}:", "intro NOTE: 😀 body WARNING: tail", ["intro", "😀 body", "tail"]],
    ["(?i)chapter \\d+", "Preface CHAPTER 1 Start chapter 2 End", ["Preface", "Start", "End"]],
  ])("%s splits %j at its matches, offsets in UTF-16 code units", (pattern, text, expected) => {
    const segments = segmentText(text, re2(pattern));
    expect(segments.map((s) => s.text)).toEqual(expected);
    for (const s of segments) expect(text.slice(s.start, s.end)).toBe(s.text);
  });

  it("offsets count the two code units of astral characters before a delimiter", () => {
    const text = "😀😀;𝒳é;👍🏽";
    expect(segmentText(text, re2(";"))).toEqual([
      { start: 0, end: 4, text: "😀😀" },
      { start: 5, end: 8, text: "𝒳é" },
      { start: 9, end: 13, text: "👍🏽" },
    ]);
  });

  it("property: for patterns both engines read alike, segments equal JavaScript's, emoji and combining marks included", () => {
    const patterns = [";", "😀", "\\n\\n", "[.!?] ", "é", "\\p{Lu}", "x+", "(?:ab|a)c", "[^a-z ]{2}"];
    const unit = fc.constantFrom("a", "b", "c", "x", "é", "e\u0301", "😀", "👩‍👩‍👧", "𝒳", ";", ".", "!", " ", "\n", "A", "Z");
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 200 }).map((units) => units.join("")), fc.constantFrom(...patterns), (text, pattern) => {
        expect(segmentText(text, re2(pattern))).toEqual(jsSegments(text, pattern));
      }),
      { numRuns: 500 },
    );
  });

  it("keeps a long paragraph between two matches whole, as the default rule keeps a long sentence", () => {
    const paragraph = "One sentence. Another one.\n".repeat(100).trim();
    const text = `Intro\n\n${paragraph}\n\nOutro`;
    expect(texts(text, "\n\n")).toEqual(["Intro", paragraph, "Outro"]);
  });

  it("ignores empty matches of a stored delimiter", () => {
    expect(texts("ab;cd", ";|x*")).toEqual(["ab", "cd"]);
  });

  it("segments with (a+)+b in linear time: 100,000 characters of a-runs neither hang nor backtrack", () => {
    const text = ("a".repeat(38) + "!").repeat(2600).slice(0, 100_000);
    const segments = segmentText(text, re2("(a+)+b"));
    expect(segments.map((s) => s.text).join("")).toBe(text);
    expect(texts("aaaa!aaab then aab", "(a+)+b")).toEqual(["aaaa!", "then"]);
  });
});

describe("compileDelimiter", () => {
  it.each(["\\n\\n", ";", "(a+)+b", "(x*)*y", "(?m)^#{1,6} ", "(?i)\\bchapter\\s+\\d+", "\\p{Lu}\\p{Ll}+:", "(?P<n>x)", "a{250}"])("accepts %j", (source) => {
    expect(compileDelimiter(source).ok).toBe(true);
  });

  it.each([
    ["a(?=b)", /invalid or unsupported Perl syntax.*RE2 syntax, which has no lookarounds or backreferences/],
    ["a(?!b)", /RE2 syntax, which has no lookarounds/],
    ["(?<=a)b", /RE2 syntax, which has no lookarounds/],
    ["(?<!a)b", /RE2 syntax, which has no lookarounds/],
    ["(a)\\1", /invalid escape sequence.*no lookarounds or backreferences/],
    ["(?<n>a)\\k<n>", /no lookarounds or backreferences/],
    ["(unclosed", /missing closing \)/],
    ["\\u00e9", /invalid escape sequence.*RE2 syntax/],
    ["a{1000}{1000}", /invalid nested repetition operator/],
    ["(?:a{1000}){1000}", /invalid repeat count/],
    ["a{1001}", /invalid repeat count/],
    ["(".repeat(499) + ")".repeat(499), /too complex/],
    ["x".repeat(MAX_DELIMITER_LENGTH + 1), new RegExp(`${MAX_DELIMITER_LENGTH + 1} characters long; at most ${MAX_DELIMITER_LENGTH}`)],
    ["[^z]{0,1000}z", new RegExp(`too complex: it compiles to \\d+ RE2 instructions; at most ${MAX_DELIMITER_PROGRAM}`)],
    [".{500}z", /too complex/],
    ["[^z]{0,1000}".repeat(20) + "z", /too complex/],
  ])("refuses pattern %#, saying why", (source, why) => {
    const compiled = compileDelimiter(source);
    expect(compiled.ok).toBe(false);
    expect(compiled.ok ? "" : compiled.reason).toMatch(why);
  });

  it("memoises by source: the worker asks once per object and field", () => {
    const first = compileDelimiter(";");
    expect(compileDelimiter(";")).toBe(first);
  });
});

describe("segmentDelimiter of a stored configuration", () => {
  const stored = (delimiters: Record<string, unknown>) =>
    JSON.parse(JSON.stringify({ index_type: { name: "text", highlights: { text: true } }, fields: { segment_delimiter: delimiters } })) as IndexConfiguration;

  it("compiles the field's delimiter with RE2", () => {
    expect(segmentText("a;b", segmentDelimiter(stored({ body: ";" }), "body")).map((s) => s.text)).toEqual(["a", "b"]);
    expect(segmentDelimiter(stored({ body: ";" }), "title")).toBeUndefined();
  });

  it.each([
    ["a(?=b)", "no lookarounds or backreferences"],
    ["(a)\\1", "no lookarounds or backreferences"],
    ["[^z]{0,1000}z", "too complex"],
    ["x".repeat(MAX_DELIMITER_LENGTH + 1), "characters long"],
    [7, "not a string"],
  ])("throws a ValidationError naming the field for pattern %#, which index creation would refuse", (source, why) => {
    let thrown: unknown;
    try {
      segmentDelimiter(stored({ body: source }), "body");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ValidationError);
    const error = thrown as ValidationError;
    expect(error.code).toBe("INVALID_CONFIG");
    expect(error.message).toMatch(/^field "body": its segment delimiter cannot be used: /);
    expect(error.message).toContain(why);
    expect(error.issues).toEqual([{ path: "configuration.fields.segment_delimiter.body", message: expect.stringContaining(why) }]);
  });
});
