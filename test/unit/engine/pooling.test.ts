import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { charWindows, combineWindows, findWrapping, poolTokens, splitWindows } from "../../../src/engine/embedding/pooling.js";

describe("findWrapping", () => {
  it("finds the special tokens before and after the text", () => {
    expect(findWrapping([7, 8], [101, 7, 8, 102])).toEqual({ prefix: [101], suffix: [102] });
    expect(findWrapping([7], [0, 7, 2, 2])).toEqual({ prefix: [0], suffix: [2, 2] });
    expect(findWrapping([7, 8], [7, 8])).toEqual({ prefix: [], suffix: [] });
  });
  it("refuses a tokenizer whose special tokens do not wrap the text", () => {
    expect(() => findWrapping([7, 8], [101, 8, 7, 102])).toThrow(/do not wrap/);
  });
});

describe("splitWindows", () => {
  const wrapping = { prefix: [101], suffix: [102] };
  it("keeps a short text in one window", () => {
    expect(splitWindows([[1, 2, 3]], 8, wrapping)).toEqual([{ text: 0, ids: [101, 1, 2, 3, 102], tokens: 3 }]);
  });
  it("gives an empty text one window of special tokens", () => {
    expect(splitWindows([[]], 8, wrapping)).toEqual([{ text: 0, ids: [101, 102], tokens: 1 }]);
  });
  it("splits long texts into wrapped windows that cover every token once", () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.integer({ min: 1, max: 999 }), { maxLength: 60 }), { minLength: 1, maxLength: 5 }), fc.integer({ min: 3, max: 20 }), (texts, window) => {
        const windows = splitWindows(texts, window, wrapping);
        texts.forEach((ids, text) => {
          const mine = windows.filter((w) => w.text === text);
          expect(mine.flatMap((w) => w.ids.slice(1, -1))).toEqual(ids);
          for (const w of mine) {
            expect(w.ids.length).toBeLessThanOrEqual(window);
            expect(w.ids[0]).toBe(101);
            expect(w.ids.at(-1)).toBe(102);
          }
        });
      }),
    );
  });
  it("refuses a window with no room for text", () => {
    expect(() => splitWindows([[1]], 2, wrapping)).toThrow(/no room/);
  });
});

describe("poolTokens", () => {
  const hidden = Float32Array.from([1, 2, 3, 4, 5, 6, 100, 100]); // 4 rows of 2; the last is padding
  it("means over the real tokens only", () => {
    expect([...poolTokens(hidden, 3, 2, "mean")]).toEqual([3, 4]);
  });
  it("takes the first token for CLS pooling", () => {
    expect([...poolTokens(hidden, 3, 2, "cls")]).toEqual([1, 2]);
  });
});

describe("combineWindows", () => {
  it("weights window vectors by their tokens and normalises", () => {
    const windows = [
      { text: 0, ids: [], tokens: 3 },
      { text: 0, ids: [], tokens: 1 },
      { text: 1, ids: [], tokens: 2 },
    ];
    const [a, b] = combineWindows(windows, [Float32Array.from([2, 0]), Float32Array.from([0, 5]), Float32Array.from([0, 3])], 2, true);
    expect(a?.[0]).toBeCloseTo(3 / Math.hypot(3, 1));
    expect(a?.[1]).toBeCloseTo(1 / Math.hypot(3, 1));
    expect([...(b as Float32Array)]).toEqual([0, 1]);
  });
});

describe("charWindows", () => {
  it("keeps short text whole", () => {
    expect(charWindows("short", 10)).toEqual(["short"]);
  });
  it("never drops or reorders characters, and cuts at spaces when it can", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 300 }), fc.integer({ min: 4, max: 50 }), (text, size) => {
        const windows = charWindows(text, size);
        expect(windows.join("")).toBe(text);
        for (const window of windows) expect(window.length).toBeLessThanOrEqual(size);
      }),
    );
    expect(charWindows("aaaa bbbb cccc", 10)).toEqual(["aaaa bbbb ", "cccc"]);
    // Found by the property above (a space just past the window once made a window one too long).
    for (const window of charWindows(" \u{10000}  ", 4)) expect(window.length).toBeLessThanOrEqual(4);
    expect(charWindows("ab cd", 3)).toEqual(["ab ", "cd"]);
  });
  it("looks at each character of a long text a bounded number of times", () => {
    // A text without line breaks was searched back to its start for a "\n" at every window: 4 MB
    // took 8 s and 64 MB (an objects body) half an hour, for one object or one long sentence.
    const original = String.prototype.lastIndexOf;
    let scanned = 0;
    String.prototype.lastIndexOf = function (this: string, search: string, from?: number) {
      const found = original.call(this, search, from);
      scanned += Math.min(from ?? this.length, this.length - 1) - Math.max(found, 0) + 1;
      return found;
    };
    const text = "word ".repeat(200_000);
    let windows: string[];
    try {
      windows = charWindows(text, 2000);
    } finally {
      String.prototype.lastIndexOf = original;
    }
    expect(windows.join("")).toBe(text);
    // (the count only means something while the windows are found with lastIndexOf: a rewrite that
    // looks otherwise must count its own way, not pass with nothing counted)
    expect(scanned).toBeGreaterThan(0);
    expect(scanned).toBeLessThan(4 * text.length);
  });
  it("does not split a surrogate pair", () => {
    const windows = charWindows(`${"x".repeat(9)}😀${"y".repeat(9)}`, 10);
    expect(windows.join("")).toContain("😀");
    for (const window of windows) expect(window).not.toMatch(/[\uD800-\uDBFF]$/);
  });
});
