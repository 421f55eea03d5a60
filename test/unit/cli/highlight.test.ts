import { stripVTControlCharacters } from "node:util";
import chalk from "chalk";
import { describe, expect, it } from "vitest";
import { matchSpans, queryStems, renderHighlight } from "../../../src/cli/render/highlight.js";

describe("highlight rendering", () => {
  it("finds query words by prefix stems, case-insensitively", () => {
    expect(queryStems("Storing electricity in cells")).toEqual(["stori", "elect", "cells"]);
    expect(matchSpans("Cells store Electricity.", ["elect", "cell"])).toEqual([
      [0, 5],
      [12, 23],
    ]);
  });

  it("finds words alike with composed or decomposed accents, at their places in the text as given", () => {
    const decomposed = "Gru\u0308ße aus Zu\u0308rich";
    expect(matchSpans(decomposed, queryStems("zürich"))).toEqual([[11, 18]]);
    expect(matchSpans("Grüße aus Zürich", queryStems("Zu\u0308rich gru\u0308ße"))).toEqual([
      [0, 5],
      [10, 16],
    ]);
    expect(matchSpans(decomposed, queryStems("Zu\u0308rich gru\u0308ße"))).toEqual([
      [0, 6],
      [11, 18],
    ]);
  });

  it("emphasises matches when colour is on, and fits the width with ellipses", () => {
    const level = chalk.level;
    chalk.level = 1;
    try {
      const text = `${"Filler words before the match. ".repeat(4)}The battery stores energy in cells. ${"More filler after it. ".repeat(4)}`;
      const line = renderHighlight(text, "battery cells", 60);
      expect(line).toContain("\u001b[1m");
      const plain = stripVTControlCharacters(line);
      expect(plain.length).toBeLessThanOrEqual(60);
      expect(plain.startsWith("…")).toBe(true);
      expect(plain.endsWith("…")).toBe(true);
      expect(plain).toContain("battery");
    } finally {
      chalk.level = level;
    }
  });

  it("has no escape codes when colour is off", () => {
    const level = chalk.level;
    chalk.level = 0;
    try {
      expect(renderHighlight("The key finding.", "key", 40)).toBe("The key finding.");
    } finally {
      chalk.level = level;
    }
  });
});

describe("cut snippets", () => {
  it("end after a whole word when one ends near the cut, and start at one", async () => {
    const { snippet } = await import("../../../src/cli/render/table.js");
    expect(snippet("Tidewater commuter jacket with taped seams", 20)).toBe("Tidewater commuter…");
    expect(snippet("Supercalifragilisticexpialidocious words", 12)).toBe("Supercalifr…"); // no word edge near: cut inside
    const line = stripVTControlCharacters(renderHighlight("Lightweight shoes with a grippy sole for muddy forest trails and the long wet winter nights", "winter", 40));
    expect(line.startsWith("…")).toBe(true);
    expect(line).toContain("winter");
    const inner = line.replace(/^…/, "").replace(/…$/, "");
    expect(inner.split(" ").every((word) => "Lightweight shoes with a grippy sole for muddy forest trails and the long wet winter nights".split(" ").includes(word))).toBe(true);
  });
});

describe("stored text in a terminal", () => {
  it("shows control characters as escapes, in cells and highlights: a stored value cannot drive the terminal", async () => {
    const { snippet } = await import("../../../src/cli/render/table.js");
    expect(snippet("evil\u001b[2J\u001b]0;PWNED\u0007", 60)).toBe("evil\\u{1b}[2J\\u{1b}]0;PWNED\\u{7}");
    expect(stripVTControlCharacters(renderHighlight("apple \u001b[8mhidden", "apple", 60))).toBe("apple \\u{1b}[8mhidden");
  });
});
