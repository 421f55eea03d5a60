/**
 * Long and deeply nested filters through the real CLI on the sample products
 * (fixtures/sample/products.jsonl). A flat OR of about 650 conditions used to crash LanceDB with
 * SIGSEGV (exit 139); filters up to the documented limits run, longer or deeper ones exit 4.
 * Each filter is built here together with its predicate, so expected sets come from the fixture.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cliJson, ROOT, runCli, tempProject } from "../helpers/cli.js";

interface Product {
  id: string;
  category: string;
  price: number;
  rating: number;
}
interface Response {
  results: { id: string; highlights?: unknown[] }[];
  pagination: { statistics: { total: number; total_calculation: string } };
}
/** A filter's text and what it selects. */
interface Filter {
  text: string;
  test: (p: Product) => boolean;
}

const PRODUCTS_FILE = path.join(ROOT, "fixtures", "sample", "products.jsonl");
const products: Product[] = readFileSync(PRODUCTS_FILE, "utf8").trim().split("\n").map((line) => JSON.parse(line));
const project = tempProject();
const FIELDS = { filterable: { allow: ["category", "price", "rating"] }, types: { price: "float", rating: "int" } };
let hybrid = "";
let neural = "";

const condition = (text: string, test: (p: Product) => boolean): Filter => ({ text, test });
const anyOf = (filters: Filter[]): Filter => ({ text: filters.map((f) => f.text).join(" OR "), test: (p) => filters.some((f) => f.test(p)) });
/** A price window [i, i + 0.5]: 1,000 of them are not one IN list, unlike equality matches. */
const window = (i: number) => condition(`price:[${i} TO ${i + 0.5}]`, (p) => p.price >= i && p.price <= i + 0.5);
const CATEGORIES = ["footwear", "camping", "kitchen", "electronics", "clothing", "fitness", "cycling", "books", "garden", "toys"];

/**
 * The costliest shape within the limits (see test/unit/engine/filters.test.ts): 1,000 conditions,
 * nested 10 levels, each level `(deeper) AND rating:>=r OR category:c`.
 */
function deepest(levels: number, conditions: number): Filter {
  let filter = anyOf(Array.from({ length: conditions - 2 * levels }, (_, i) => window(i)));
  for (let level = 0; level < levels; level++) {
    const inner = filter;
    const rating = 3 + (level % 3);
    const category = CATEGORIES[level] as string;
    filter = {
      text: `(${inner.text}) AND rating:>=${rating} OR category:${category}`,
      test: (p) => (inner.test(p) && p.rating >= rating) || p.category === category,
    };
  }
  return filter;
}

async function search(index: string, filter: string, ...args: string[]) {
  return runCli(["--project", project, "--json", "search", index, "things to buy", "--filter", filter, "--limit", "1000", ...args]);
}

/** Runs a filter that must succeed and checks it selects exactly what its predicate does. */
async function expectSelects(index: string, filter: Filter, ...args: string[]): Promise<Response> {
  const result = await search(index, filter.text, ...args);
  expect(result.exitCode, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(0);
  expect(result.stderr).toBe("");
  const response = JSON.parse(result.stdout) as Response;
  const expected = products.filter(filter.test).map((p) => p.id).sort();
  expect(expected.length).toBeGreaterThan(0);
  expect(expected.length).toBeLessThan(products.length);
  expect(response.results.map((r) => r.id).sort()).toEqual(expected);
  expect(response.pagination.statistics).toEqual({ total: expected.length, total_calculation: "exact" });
  return response;
}

beforeAll(async () => {
  await cliJson(project, ["objects", "add", PRODUCTS_FILE]);
  const create = async (index_type: Record<string, unknown>) => {
    const file = path.join(path.dirname(project), `${Object.keys(index_type).join("-")}.json`);
    writeFileSync(file, JSON.stringify({ configuration: { index_type: { name: "text", ...index_type }, fields: FIELDS } }));
    return (await cliJson(project, ["index", "create", "--config", file])).id as string;
  };
  hybrid = await create({ highlights: { text: true } });
  neural = await create({ neural_only: true });
  for (const id of [hybrid, neural]) await cliJson(project, ["index", "status", id, "--wait"]);
});

describe("the 700 OR-ed conditions that crashed LanceDB (SIGSEGV) run", () => {
  // category:x0 OR … OR category:kitchen OR … OR category:books: 700 values of one field
  const values = Array.from({ length: 700 }, (_, i) => (i === 350 ? "kitchen" : i === 699 ? "books" : `x${i}`));
  const categories = anyOf(values.map((v) => condition(`category:${v}`, (p) => p.category === v)));

  it.each([
    ["hybrid", () => hybrid, []],
    ["neural-only", () => neural, []],
    ["hybrid with highlights", () => hybrid, ["--result-fields", "highlights"]],
  ])("one field's values, on a %s index", async (_, index, args) => {
    expect(categories.text.length).toBeGreaterThan(8000);
    const response = await expectSelects(index(), categories, ...args);
    if (args.length > 0) expect(response.results.some((r) => (r.highlights ?? []).length > 0)).toBe(true);
  });

  it("700 price ranges, which are not one IN list", async () => {
    await expectSelects(hybrid, anyOf(Array.from({ length: 700 }, (_, i) => window(i))));
  });
});

describe("filters at the limits (1,000 conditions, 10 levels) run", () => {
  const atLimit = deepest(10, 1000);

  it.each([
    ["hybrid", () => hybrid, []],
    ["neural-only", () => neural, []],
    ["hybrid with highlights", () => hybrid, ["--result-fields", "highlights"]],
  ])("the costliest shape, on a %s index", async (_, index, args) => {
    await expectSelects(index(), atLimit, ...args);
  });

  it("1,000 NOT-ed price ranges AND-ed, and ten nested NOTs", async () => {
    const ranges = Array.from({ length: 1000 }, (_, i) => window(i));
    await expectSelects(hybrid, { text: ranges.map((r) => `NOT ${r.text}`).join(" AND "), test: (p) => !ranges.some((r) => r.test(p)) });
    // LanceDB's parser refused 23 nested NOTs (exit 1): ten, the limit, run
    await expectSelects(hybrid, { text: `${"NOT ".repeat(10)}category:kitchen`, test: (p) => p.category === "kitchen" });
  });
});

describe("filters beyond the limits are validation errors (exit 4)", () => {
  it("1,001 conditions: the message gives both counts, the column the first one over", async () => {
    const conditions = Array.from({ length: 1001 }, (_, i) => `category:x${i}`);
    const result = await search(hybrid, conditions.join(" OR "));
    expect(result.exitCode, result.stderr).toBe(4);
    expect(result.stdout).toBe("");
    const error = JSON.parse(result.stderr).errors[0];
    expect(error.code).toBe("INVALID_FILTER");
    expect(error.message).toContain("this filter has 1,001 conditions; at most 1,000 are supported");
    expect(error.issues[0]).toMatchObject({ path: "filter", column: conditions.slice(0, 1000).join(" OR ").length + 5 });
  });

  it("11 levels of nesting, on a neural-only index too", async () => {
    const filter = deepest(11, 1000).text;
    for (const index of [hybrid, neural]) {
      const result = await search(index, filter);
      expect(result.exitCode, result.stderr).toBe(4);
      const error = JSON.parse(result.stderr).errors[0];
      expect(error.code).toBe("INVALID_FILTER");
      expect(error.message).toContain("nested deeper than 10 levels (parentheses and NOTs)");
      expect(error.issues[0].column).toBe(12);
    }
  });
});
