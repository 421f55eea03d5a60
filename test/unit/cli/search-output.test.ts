import { stripVTControlCharacters } from "node:util";
import { describe, expect, it } from "vitest";
import { outputMode, type SearchOptions } from "../../../src/cli/commands/search-command.js";
import { menuEntries, pageHeader } from "../../../src/cli/interactive.js";
import { pageFooter, renderSearchTable, searchColumns } from "../../../src/cli/render/table.js";
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

function page(n: number, minimum = false, id = (i: number) => `object-${i}`): SearchPage {
  return {
    hits: Array.from({ length: n }, (_, i) => ({
      id: id(i),
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

describe("renderSearchTable in a narrow terminal", () => {
  const longId = (i: number) => `0a1b2c3d-4e5f-6789-abcd-ef012345678${i}`;
  const fieldSets = [[], ["title"], ["title", "price"], ["title", "price", "maker"]];
  // every line, footer included, for long ids, requested fields and ranks near the 10,000 cap
  it.each(fieldSets.flatMap((fields) => [60, 50, 40].flatMap((width) => [0, 9990].map((offset) => [width, fields, offset] as const))))("%i columns, fields %j, offset %i: no line is wider", (width, fields, offset) => {
    const lines = stripVTControlCharacters(renderSearchTable(page(5, false, longId), offset, [...fields], "shoes", width)).split("\n").filter(Boolean);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(width);
    expect(lines.join("\n")).toMatch(/│ #\s+│ id\s+│ score │ best highlight|│ #\s+│ id\s+│ score │ text/);
    expect(lines.join("\n")).toContain(`│ ${offset + 1} `);
  });

  it("keeps the comfortable widths where they fit and gives the text the rest", () => {
    expect(searchColumns(120, { rank: 1, id: 8, score: 5 }, 1)).toEqual({ rank: 3, id: 10, score: 7, text: 120 - 3 - 10 - 7 - 18 - 6, field: 18, fields: 1 });
  });

  it.each([60, 50, 40])("at %i columns the widths and borders add up to the width", (width) => {
    for (const fieldCount of [0, 1, 3, 6]) {
      const c = searchColumns(width, { rank: 5, id: 36, score: 5 }, fieldCount);
      expect(c.rank + c.id + c.score + c.text + c.fields * c.field + c.fields + 5).toBe(width);
      expect(c.text).toBeGreaterThanOrEqual(14); // 15 at 40 columns with 5-digit ranks
    }
  });

  it("leaves fields out from the right rather than squeezing the text below 16", () => {
    const c = searchColumns(40, { rank: 1, id: 3, score: 5 }, 2);
    expect(c.fields).toBe(0);
    expect(stripVTControlCharacters(renderSearchTable(page(3), 0, ["title", "price"], "shoes", 40))).not.toMatch(/title/);
  });
});

describe("menuEntries", () => {
  const at = (offset: number, next: boolean, hits = 3): SearchPage => {
    const p = page(hits);
    if (!next) delete p.pagination.next;
    return p;
  };
  const keys = (entries: ReturnType<typeof menuEntries>) => entries.map((e) => `${e.value} ${e.label}`);

  it("lists the same entries in the same order on the first, a middle and the last page", () => {
    const first = menuEntries(at(0, true), { query: "q", offset: 0, limit: 3 });
    const middle = menuEntries(at(3, true), { query: "q", offset: 3, limit: 3 });
    const last = menuEntries(at(6, false), { query: "q", offset: 6, limit: 3 });
    expect(keys(first)).toEqual(["n Next page", "p Previous page", "g Go to page…", "r Refresh", "s Results per page…", "o Open a result…", "/ New query…", "q Quit"]);
    expect(keys(middle)).toEqual(keys(first));
    expect(keys(last)).toEqual(keys(first));
  });

  it("disables what does not apply instead of removing it", () => {
    const disabled = (entries: ReturnType<typeof menuEntries>) => entries.filter((e) => e.disabled).map((e) => e.value);
    expect(disabled(menuEntries(at(0, true), { query: "q", offset: 0, limit: 3 }))).toEqual(["p"]);
    expect(disabled(menuEntries(at(3, true), { query: "q", offset: 3, limit: 3 }))).toEqual([]);
    expect(disabled(menuEntries(at(6, false), { query: "q", offset: 6, limit: 3 }))).toEqual(["n"]);
    expect(disabled(menuEntries(at(0, false, 0), { query: "q", offset: 0, limit: 3 }))).toEqual(["n", "p", "o"]);
  });
});

describe("pageHeader", () => {
  it("cuts a long query so the header fits the width", () => {
    const header = stripVTControlCharacters(pageHeader("waterproof ".repeat(10), page(3), 60));
    expect(header.length).toBeLessThanOrEqual(60);
    expect(header).toMatch(/^“waterproof waterproof.*…” · page 1 of 3 · 9 results$/);
  });

  it("shows the page, the pages and the total, with ≥ when the total is a minimum", () => {
    expect(stripVTControlCharacters(pageHeader("shoes", page(3)))).toBe("“shoes” · page 1 of 3 · 9 results");
    expect(stripVTControlCharacters(pageHeader("shoes", page(3, true)))).toBe("“shoes” · page 1 of ≥ 3 · ≥ 9 results");
  });

  it("says when the index is still building, and that r refreshes", () => {
    const building = { ...page(3), building: { searchable: 12, total: 40 } };
    expect(stripVTControlCharacters(pageHeader("shoes", building, 80))).toBe("“shoes” · page 1 of 3 · 9 results\nstill building: 12 of 40 objects searchable · r refreshes");
  });
});

describe("the line under a page", () => {
  const empty = (total: number, current: number, pages: number): SearchPage => ({ hits: [], pagination: { pages, page: current, statistics: { total, total_calculation: "exact" } } });

  it("says there are no results, without an empty table", () => {
    expect(stripVTControlCharacters(renderSearchTable(empty(0, 1, 0), 0, [], "shoes", 80))).toBe("No results.\n");
  });

  it("names the last page when asked for one past it", () => {
    expect(stripVTControlCharacters(pageFooter(empty(203, 99, 21)))).toBe("No results on page 99: the last page is 21 (203 results).");
  });

  it("counts one result as one", () => {
    const one: SearchPage = { ...page(1), pagination: { pages: 1, page: 1, statistics: { total: 1, total_calculation: "exact" } } };
    expect(stripVTControlCharacters(pageFooter(one))).toBe("Page 1 of 1 · 1 result");
    expect(stripVTControlCharacters(pageHeader("shoes", one))).toBe("“shoes” · page 1 of 1 · 1 result");
    expect(stripVTControlCharacters(pageFooter({ ...page(3), pagination: { pages: 1, page: 1, statistics: { total: 12345, total_calculation: "exact" } } }))).toBe("Page 1 of 1 · 12,345 results");
  });
});

describe("--page", () => {
  it("is refused with --all, which prints every result (--offset starts it further down)", async () => {
    const { resolveOffset } = await import("../../../src/cli/commands/search-command.js");
    expect(() => resolveOffset({ all: true, page: 2 })).toThrow(/--all prints every result/);
    expect(resolveOffset({ all: true, offset: 20 })).toBe(20);
    expect(resolveOffset({ page: 3, limit: 5 })).toBe(10);
  });
});

describe("--object-fields '*' in a table", () => {
  it("shows the page's objects' top-level fields, first seen first, without the id", async () => {
    const { starFields } = await import("../../../src/cli/commands/search-command.js");
    expect(starFields(page(2))).toEqual(["title", "price", "maker"]);
    const mixed: SearchPage = { ...page(0), hits: [{ id: "a", score: 1, object: { id: "a", b: 1 }, text: "" }, { id: "c", score: 0.5, object: { z: 2, b: 3 }, text: "" }] };
    expect(starFields(mixed)).toEqual(["b", "z"]);
  });
});

describe("field columns sized to their content", () => {
  it("shares widths: each what it needs when all fit, else the narrow ones first and equal shares of the rest", async () => {
    const { shareWidths } = await import("../../../src/cli/render/table.js");
    expect(shareWidths(40, [7, 12])).toEqual([7, 12]);
    expect(shareWidths(36, [42, 7])).toEqual([29, 7]);
    expect(shareWidths(30, [40, 40, 3])).toEqual([12, 12, 6]);
  });

  it("gives a long title room and a short price little, the table still within the width", () => {
    const lines = stripVTControlCharacters(renderSearchTable(page(3), 0, ["title", "price"], "shoes", 120)).split("\n").filter(Boolean);
    for (const line of lines.slice(0, -1)) expect(line.length, line).toBeLessThanOrEqual(120);
    const header = lines.find((line) => line.includes("title")) as string;
    const cells = header.split("│").map((part) => part.length);
    const [title, price] = [cells.at(-3) as number, cells.at(-2) as number];
    expect(title).toBeGreaterThan(18);
    expect(price).toBeLessThan(10);
    expect(lines.join("\n")).toContain("A fairly long title that would not"); // (not "Tidewater com…" at 18)
  });
});
