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
