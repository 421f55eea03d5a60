import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonErrorOffset, notJsonReason } from "../../../src/engine/json-error.js";

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe("jsonErrorOffset", () => {
  it.each<[string, number | null]>([
    ['{"a": [1, 2.5e-3, true, null, "x\\u00e9\\n"]}', null],
    ["  []  ", null],
    ["[]", null],
    ["", 0],
    ["SECRET{", 0],
    ['{"a": }', 6],
    ['{"a": 1,}', 8],
    ['{"a" 1}', 5],
    ["[1, 2", 5],
    ['{"a": "unterminated', 19],
    ["[01]", 2],
    ["[1.]", 2],
    // A bad escape: the character after the backslash, as JSON.parse reports it (position 2, 4, 5).
    ['"\\q"', 2],
    ['["a\\x"]', 4],
    ['"\\u12g4"', 5],
    ['"\\u12', 5],
    ['"ab\\\n"', 4],
    ['["tab\there"]', 5],
    ["{} {}", 3],
    ["{} x", 3],
    ["[".repeat(100_000) + "]".repeat(100_000), null],
  ])("%j → %j", (text, offset) => {
    expect(jsonErrorOffset(text)).toBe(offset);
    expect(offset === null).toBe(parses(text));
  });

  it("nesting deeper than the stack costs none: 200,000 [ end early, at their end", () => {
    expect(jsonErrorOffset("[".repeat(200_000))).toBe(200_000);
    expect(jsonErrorOffset('{"a":'.repeat(200_000) + "x")).toBe(1_000_000);
  });

  it("tells objects from arrays at every depth (mixed nesting 10,000 deep)", () => {
    const kinds = Array.from({ length: 10_000 }, (_, level) => (level * 7) % 3 === 0);
    const opens = kinds.map((object) => (object ? '{"k":' : "[")).join("");
    const closes = kinds.map((object) => (object ? "}" : "]")).reverse();
    expect(jsonErrorOffset(opens + "1" + closes.join(""))).toBeNull();
    for (const level of [0, 7, 8, 511, 512, 513, 9_999]) {
      const wrong = [...closes];
      const at = closes.length - 1 - level;
      wrong[at] = wrong[at] === "}" ? "]" : "}";
      const text = opens + "1" + wrong.join("");
      expect(jsonErrorOffset(text), `level ${level}`).toBe(opens.length + 1 + at);
      expect(parses(text)).toBe(false);
    }
  });

  // 250 MB of text: run with SEMSEARCH_LARGE_TESTS=1.
  it.runIf(process.env.SEMSEARCH_LARGE_TESTS)("250 million [ (a model file just under the 256 MB looked into): the offset, not a crash", () => {
    expect(jsonErrorOffset("[".repeat(250_000_000))).toBe(250_000_000);
  }, 120_000);

  it("agrees with JSON.parse on validity", () => {
    for (const text of ["{", "[1,]", '{"a":1,}', "nul", "-", "1.", '"abc', "[true false]", '{"k":"v"}', "\uFEFF{}"]) {
      expect(jsonErrorOffset(text) === null, text).toBe(parses(text));
    }
  });

  it("property: finds a fault exactly when JSON.parse fails, on JSON and on JSON with one character changed", () => {
    const json = fc.json({ maxDepth: 4 });
    const mutated = fc.tuple(json, fc.nat(), fc.constantFrom("", "{", "}", "[", "]", ",", ":", '"', "\\", "1", "e", "-", " ", ".", "t", "\n", "u")).map(([text, at, c]) => {
      const i = at % (text.length + 1);
      return text.slice(0, i) + c + text.slice(i + 1);
    });
    fc.assert(
      fc.property(fc.oneof(json, mutated, fc.string()), (text) => {
        expect(jsonErrorOffset(text) === null).toBe(parses(text));
      }),
      { numRuns: 3000 },
    );
  });
});

describe("notJsonReason", () => {
  it.each<[string, string]>([
    ["SECRET:x:0:0:root:/root:/bin/bash\n", "not valid JSON (line 1, column 1)"],
    ['{"version":1,\n "indexes":[SECRET]}', "not valid JSON (line 2, column 13)"],
    ['{\r\n  "a": SECRET}', "not valid JSON (line 2, column 8)"],
    ['{"vocab": {"SECRET": 1', "not valid JSON (it ends early, at line 1)"],
    ["[1,\n", "not valid JSON (it ends early, at line 2)"],
    ["", "not valid JSON (it ends early, at line 1)"],
  ])("names the line and column, or where it ends early, never the text: %j", (text, reason) => {
    expect(notJsonReason(text)).toBe(reason);
  });

  it("nesting deeper than the stack: the place all the same", () => {
    expect(notJsonReason("[".repeat(200_000))).toBe("not valid JSON (it ends early, at line 1)");
    expect(notJsonReason("\n".repeat(3) + "[".repeat(200_000) + "SECRET")).toBe("not valid JSON (line 4, column 200001)");
  });

  it("without a fault found (JSON.parse refused it for another reason): no place", () => {
    expect(notJsonReason("{}")).toBe("not valid JSON");
  });
});
