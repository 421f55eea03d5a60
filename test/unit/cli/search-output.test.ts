import { stripVTControlCharacters } from "node:util";
import { describe, expect, it } from "vitest";
import { outputMode, type SearchOptions } from "../../../src/cli/commands/search-command.js";
import { pageHeader } from "../../../src/cli/interactive.js";
import { renderSearchTable } from "../../../src/cli/render/table.js";
import { UsageError } from "../../../src/engine/errors.js";
import type { SearchPage } from "../../../src/engine/types.js";

const tty = { stdin: true, stdout: true };
const pipe = { stdin: false, stdout: false };

describe("outputMode", () => {
  it.each<[SearchOptions, typeof tty, string]>([
    [{}, tty, "interactive"],
    [{}, pipe, "table"],
    [{}, { stdin: true, stdout: false }, "table"],
    [{}, { stdin: false, stdout: true }, "table"],
    [{ json: true }, tty, "json"],
    [{ jsonl: true }, tty, "jsonl"],
    [{ interactive: false }, tty, "table"],
    [{ all: true }, tty, "table"],
    [{ all: true, jsonl: true }, pipe, "jsonl"],
    [{ interactive: true }, tty, "interactive"],
  ])("%j with %j → %s", (options, terminal, mode) => {
    expect(outputMode(options, terminal)).toBe(mode);
  });

  it.each<[SearchOptions, typeof tty]>([
    [{ json: true, jsonl: true }, pipe],
    [{ interactive: true }, pipe],
    [{ interactive: true, json: true }, tty],
    [{ interactive: true, all: true }, tty],
  ])("%j with %j is a usage error", (options, terminal) => {
    expect(() => outputMode(options, terminal)).toThrow(UsageError);
  });
});

function page(n: number, minimum = false): SearchPage {
  return {
    hits: Array.from({ length: n }, (_, i) => ({
      id: `object-${i}`,
      score: 1 - i / 10,
      object: { id: `object-${i}`, title: "A fairly long title that would not fit a narrow column at all", price: 12.5, maker: { name: "Ridgeway" } },
      text: "Lightweight shoes with a grippy sole for muddy forest trails. ".repeat(4),
    })),
    pagination: { pages: 3, page: 1, next: { offset: n, limit: n }, statistics: { total: 3 * n, total_calculation: minimum ? "minimum" : "exact" } },
  };
}

describe("renderSearchTable", () => {
  it.each([
    [60, []],
    [80, ["title", "price", "maker"]],
    [100, ["title"]],
    [160, ["title", "price", "maker", "id"]],
  ])("fits %i columns with fields %j", (width, fields) => {
    const lines = stripVTControlCharacters(renderSearchTable(page(3), 0, fields as string[], "shoes", width)).split("\n").filter(Boolean);
    for (const line of lines.slice(0, -1)) expect(line.length, line).toBeLessThanOrEqual(width);
    expect(lines.at(-1)).toMatch(/Page 1 of 3 · 9 results/);
  });
});

describe("pageHeader", () => {
  it("shows the page, the pages and the total, with ≥ when the total is a minimum", () => {
    expect(stripVTControlCharacters(pageHeader("shoes", page(3)))).toBe("“shoes” · page 1 of 3 · 9 results");
    expect(stripVTControlCharacters(pageHeader("shoes", page(3, true)))).toBe("“shoes” · page 1 of ≥ 3 · ≥ 9 results");
  });
});
