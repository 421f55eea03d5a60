import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliJson, tempProject } from "../helpers/cli.js";
import { serve, type Served } from "../helpers/serve.js";

const project = tempProject();
let server: Served | undefined;
const COUNT = 300;
const subjects = ["river", "market", "engine", "garden", "violin", "glacier", "harbour", "orchard", "tunnel", "comet"];
const verbs = ["flooded", "reopened", "stalled", "bloomed", "echoed", "melted", "filled", "ripened", "collapsed", "appeared"];
const places = ["near the old mill", "after the storm", "in the valley", "before dawn", "at the festival"];

/** Deterministic generated objects: every one mentions a subject, so lexical matches overlap vector ones. */
function generated(): string {
  const lines: string[] = [];
  for (let i = 0; i < COUNT; i++) {
    const text = `The ${subjects[i % 10]} ${verbs[Math.floor(i / 10) % 10]} ${places[i % 5]} (${i}).`;
    lines.push(JSON.stringify({ id: `g${String(i).padStart(3, "0")}`, text }));
  }
  return lines.join("\n");
}

interface Page {
  results: { id: string }[];
  pagination: {
    pages: number;
    page: number;
    next?: { offset: number; limit: number };
    statistics: { total: number; total_calculation: "exact" | "minimum" };
  };
}

/** Follows `next` from the first page to the last, as a client would. */
async function walk(indexId: string, query: string, limit: number, extra: string[] = []) {
  const ids: string[] = [];
  const pages: Page["pagination"][] = [];
  let args = ["--limit", String(limit)];
  for (let guard = 0; guard < 50; guard++) {
    const page = await cliJson<Page>(project, ["search", indexId, query, ...args, ...extra]);
    ids.push(...page.results.map((r) => r.id));
    pages.push(page.pagination);
    if (!page.pagination.next) break;
    args = ["--offset", String(page.pagination.next.offset), "--limit", String(page.pagination.next.limit)];
  }
  return { ids, pages };
}

function expectInvariant(ids: string[], pages: Page["pagination"][]) {
  expect(new Set(ids).size).toBe(ids.length);
  for (const { statistics } of pages) {
    if (statistics.total_calculation === "exact") expect(ids.length).toBe(statistics.total);
    else expect(ids.length).toBeGreaterThanOrEqual(statistics.total);
  }
}

let hybrid = "";
let neural = "";
let highlighted = "";
beforeAll(async () => {
  await cliJson(project, ["objects", "add", "-"], { input: generated() });
  hybrid = (await cliJson(project, ["index", "create"])).id;
  neural = (await cliJson(project, ["index", "create", "--neural-only"])).id;
  highlighted = (await cliJson(project, ["index", "create", "--highlights"])).id;
  for (const id of [hybrid, neural, highlighted]) await cliJson(project, ["index", "status", id, "--wait"]);
  // The walks below run a CLI search per page: a server of the project answers them warm (the same
  // bytes as in the CLI's own process, test/e2e/local-search.test.ts), each not loading the model again.
  server = await serve(project, ["--no-auth"]);
});

afterAll(async () => {
  await server?.stop();
});

describe("paging through every page", () => {
  it("hybrid: each result once, no gaps, the union of lexical and vector results", async () => {
    const { ids, pages } = await walk(hybrid, "glacier melted", 40);
    expectInvariant(ids, pages);
    expect(ids.length).toBeGreaterThanOrEqual(250);
    expect(pages[0]?.statistics.total).toBe(250);
    // "The glacier melted …" is objects 55, 155 and 255: they match both words.
    expect(ids.slice(0, 3).sort()).toEqual(["g055", "g155", "g255"]);
  });

  it("hybrid: a minimum total grows once the offset passes it, and is exact where the results run out (rule 10)", async () => {
    // "comet" and "appeared" match 57 objects, not all among the 250 nearest: the union is longer than the first total
    const { ids, pages } = await walk(hybrid, "comet appeared", 50);
    expectInvariant(ids, pages);
    expect(pages[0]?.statistics).toEqual({ total: 250, total_calculation: "minimum" });
    expect(ids.length).toBeGreaterThan(250);
    expect(ids.length).toBeLessThan(300);
    // pages at offsets 0, 50, …, 250: the last starts exactly at the first total, and runs out
    expect(pages.map((page) => page.statistics)).toEqual([
      ...Array.from({ length: 5 }, () => ({ total: 250, total_calculation: "minimum" })),
      { total: ids.length, total_calculation: "exact" },
    ]);
    // a page that starts within the first total and runs out past it
    const across = await cliJson<Page>(project, ["search", hybrid, "comet appeared", "--offset", "245", "--limit", "10"]);
    expect(across.results.map((r) => r.id)).toEqual(ids.slice(245));
    expect(across.pagination).toEqual({ pages: Math.ceil(ids.length / 10), page: 25, statistics: { total: ids.length, total_calculation: "exact" } });
    // a page past the end says the same
    const past = await cliJson<Page>(project, ["search", hybrid, "comet appeared", "--offset", "400", "--limit", "10"]);
    expect(past.results).toEqual([]);
    expect(past.pagination.statistics).toEqual({ total: ids.length, total_calculation: "exact" });
  });

  it("neural-only: total starts at 250 as a minimum, grows past it, ends exact with every object", async () => {
    const { ids, pages } = await walk(neural, "a violin echoed at the festival", 60);
    expectInvariant(ids, pages);
    expect(pages[0]?.statistics).toEqual({ total: 250, total_calculation: "minimum" });
    expect(pages.at(-1)?.statistics).toEqual({ total: COUNT, total_calculation: "exact" });
    expect(new Set(ids).size).toBe(COUNT);
  });

  it("with highlights: objects ranked by best highlight, then the rest, each once", async () => {
    const { ids, pages } = await walk(highlighted, "glacier melted", 40, ["--result-fields", "highlights"]);
    expectInvariant(ids, pages);
    expect(ids.length).toBeGreaterThanOrEqual(250);
    expect(ids.slice(0, 3).sort()).toEqual(["g055", "g155", "g255"]);
  });

  it("with a filter: the filtered set is ranked whole, its total exact, each object once (hybrid and neural-only)", async () => {
    for (const index of [hybrid, neural]) {
      // id is filterable (as text) on an index without filterable rules: a lexicographic range of 100 ids
      const { ids, pages } = await walk(index, "glacier melted", 30, ["--filter", "id:[g100 TO g199]"]);
      expectInvariant(ids, pages);
      expect(pages.map((p) => p.statistics)).toEqual(pages.map(() => ({ total: 100, total_calculation: "exact" })));
      expect([...ids].sort()).toEqual(Array.from({ length: 100 }, (_, i) => `g${100 + i}`));
    }
  });

  it("pages of different sizes agree with one big page", async () => {
    const big = await cliJson<Page>(project, ["search", neural, "harbour", "--limit", "100"]);
    const small = await walk(neural, "harbour", 25);
    expect(small.ids.slice(0, 100)).toEqual(big.results.map((r) => r.id));
  });
});
