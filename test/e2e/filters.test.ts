/**
 * Field rules, typed fields and filters through the real CLI, on the sample products
 * (fixtures/sample/products.jsonl). Expected sets are computed here from the fixture itself.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliJson, ROOT, runCli, tempProject } from "../helpers/cli.js";
import { serve, type Served } from "../helpers/serve.js";

interface Product {
  id: string;
  title: string;
  description: string;
  category: string;
  price: number;
  rating: number;
  in_stock: boolean;
  released: string;
  tags: string[];
  maker: { name: string; country: string };
  sku_note: string;
}
interface Response {
  results: { id: string; object: Record<string, unknown>; highlights?: unknown[] }[];
  pagination: { pages: number; page: number; next?: { offset: number; limit: number }; statistics: { total: number; total_calculation: string } };
}

const PRODUCTS_FILE = path.join(ROOT, "fixtures", "sample", "products.jsonl");
const products: Product[] = readFileSync(PRODUCTS_FILE, "utf8").trim().split("\n").map((line) => JSON.parse(line));
const project = tempProject();
const CONFIG = {
  configuration: {
    index_type: { name: "text", highlights: { text: true } },
    fields: {
      crawlable: { deny: ["sku_note"] },
      searchable: { allow: ["title", "description", "maker.name"] },
      filterable: { allow: ["category", "price", "rating", "in_stock", "released", "maker.country", "tags"] },
      types: { price: "float", rating: "int", in_stock: "bool", released: "datetime" },
    },
  },
};
let typed = "";
let server: Served | undefined;
let plain = "";
let neural = "";

const search = (index: string, query: string, ...args: string[]) => cliJson<Response>(project, ["search", index, query, ...args]);
/** Every result of a filtered search, in one page. */
async function all(index: string, filter: string, query = "things to buy"): Promise<Response> {
  return search(index, query, "--filter", filter, "--limit", "1000");
}
const ids = (response: Response) => response.results.map((r) => r.id).sort();
const expected = (predicate: (p: Product) => boolean) => products.filter(predicate).map((p) => p.id).sort();
const ms = (iso: string) => Date.parse(iso);

beforeAll(async () => {
  await cliJson(project, ["objects", "add", PRODUCTS_FILE]);
  const config = path.join(path.dirname(project), "config.json");
  writeFileSync(config, JSON.stringify(CONFIG));
  typed = (await cliJson(project, ["index", "create", "--config", config])).id;
  plain = (await cliJson(project, ["index", "create"])).id;
  neural = (await cliJson(project, ["index", "create", "--neural-only", "--filterable", "category,price", "--field-type", "price=float"])).id;
  for (const id of [typed, plain, neural]) await cliJson(project, ["index", "status", id, "--wait"]);
  // Searches are answered by a running server, as a user's would be (the CLI asks it over the local
  // socket, and prints what a search in its own process prints: test/e2e/local-search.test.ts): it
  // keeps the model loaded, so the file's 40-odd searches do not each load it.
  server = await serve(project, ["--no-auth"]);
});
afterAll(async () => {
  await server?.stop();
});

describe("filters match exactly the objects the predicate selects", () => {
  it.each<[string, (p: Product) => boolean]>([
    ["price:<100 AND in_stock:true", (p) => p.price < 100 && p.in_stock],
    ["price:[45 TO 89.9]", (p) => p.price >= 45 && p.price <= 89.9],
    ["price:{45 TO 89.9}", (p) => p.price > 45 && p.price < 89.9],
    ["price:[* TO 24]", (p) => p.price <= 24],
    ["rating:5 OR rating:3", (p) => p.rating === 5 || p.rating === 3],
    ["rating:>=4 AND NOT category:kitchen", (p) => p.rating >= 4 && p.category !== "kitchen"],
    ["in_stock:false", (p) => !p.in_stock],
    ["released:>=2024-01-01", (p) => ms(p.released) >= Date.UTC(2024, 0, 1)],
    // 2022-11-20T10:30:00+01:00 is 09:30 UTC: the offset is honoured
    ["released:[2022-11-20T09:30:00Z TO 2022-11-20T09:30:00Z]", (p) => ms(p.released) === Date.UTC(2022, 10, 20, 9, 30)],
    ["maker.country:JP", (p) => p.maker.country === "JP"],
    ['category:"books" OR (category:cycling AND price:<50)', (p) => p.category === "books" || (p.category === "cycling" && p.price < 50)],
    ["NOT (category:camping OR category:kitchen OR category:electronics)", (p) => !["camping", "kitchen", "electronics"].includes(p.category)],
    ["price:*", () => true],
    // a list matches when any element does
    ["tags:outdoor", (p) => p.tags.includes("outdoor")],
    ["tags:outdoor AND NOT tags:running", (p) => p.tags.includes("outdoor") && !p.tags.includes("running")],
    ["tags:gadgets OR tags:reading OR category:kitchen", (p) => p.tags.includes("gadgets") || p.tags.includes("reading") || p.category === "kitchen"],
    ["tags:[s TO t}", (p) => p.tags.some((t) => t >= "s" && t < "t")],
  ])("%s", async (filter, predicate) => {
    const response = await all(typed, filter);
    expect(ids(response)).toEqual(expected(predicate));
    // a small set is ranked whole: the total is its exact size (spec §4.3 rule 9)
    expect(response.pagination.statistics).toEqual({ total: expected(predicate).length, total_calculation: "exact" });
  });

  it("a filter that leaves nothing is an empty, exact result (exit 0)", async () => {
    const response = await all(typed, "price:>10000");
    expect(response.results).toEqual([]);
    expect(response.pagination.statistics).toEqual({ total: 0, total_calculation: "exact" });
  });

  it("keeps the relevance order within the filtered set", async () => {
    const response = await search(typed, "running shoes for trails", "--filter", "category:footwear");
    expect(response.results[0]?.id).toBe("p01");
  });

  it("pages through a filtered result without gaps or repeats", async () => {
    const whole = await search(typed, "outdoor gear", "--filter", "in_stock:true", "--limit", "1000");
    const walked: string[] = [];
    let offset = 0;
    for (;;) {
      const page = await search(typed, "outdoor gear", "--filter", "in_stock:true", "--limit", "4", "--offset", String(offset));
      expect(page.pagination.statistics).toEqual(whole.pagination.statistics);
      walked.push(...page.results.map((r) => r.id));
      if (!page.pagination.next) break;
      offset = page.pagination.next.offset;
    }
    expect(walked).toEqual(whole.results.map((r) => r.id));
    expect(new Set(walked).size).toBe(walked.length);
  });

  it("filters highlights to the same objects", async () => {
    const response = await search(typed, "coffee", "--filter", "price:<100", "--result-fields", "highlights", "--object-fields", "*");
    expect(response.results.length).toBeGreaterThan(0);
    for (const result of response.results) expect(result.object.price as number).toBeLessThan(100);
    expect(response.results.some((r) => (r.highlights ?? []).length > 0)).toBe(true);
  });

  it("filters a neural-only index; a small set is exact there too", async () => {
    const response = await all(neural, "category:kitchen");
    expect(ids(response)).toEqual(expected((p) => p.category === "kitchen"));
    expect(response.pagination.statistics).toEqual({ total: 5, total_calculation: "exact" });
  });
});

describe("field rules", () => {
  it("non-crawlable fields are left out of results' objects, but kept in the store", async () => {
    const response = await search(typed, "shoes", "--object-fields", "*", "--limit", "1");
    expect(response.results[0]?.object).not.toHaveProperty("sku_note");
    expect(response.results[0]?.object).toHaveProperty("title");
    const stored = await cliJson(project, ["objects", "get", response.results[0]?.id as string]);
    expect(stored.object.sku_note).toMatch(/internal stock code/);
  });

  it("only searchable fields (nested ones included) are matched lexically", async () => {
    expect((await search(typed, "Kitamura", "--mode", "lexical")).results.map((r) => r.id).sort()).toEqual(["p11", "p12", "p13"]);
    expect((await search(typed, "footwear", "--mode", "lexical")).results).toEqual([]); // category: filterable, not searchable
    expect((await search(typed, "stock code", "--mode", "lexical")).results).toEqual([]); // not crawlable
    // an index without rules searches every field but id
    expect((await search(plain, "Kitamura", "--mode", "lexical")).results.map((r) => r.id).sort()).toEqual(["p11", "p12", "p13"]);
    expect((await search(plain, "footwear", "--mode", "lexical")).results.length).toBe(4);
  });

  it("without filterable rules every top-level scalar field is filterable as a string", async () => {
    expect(ids(await all(plain, "category:kitchen"))).toEqual(expected((p) => p.category === "kitchen"));
    expect(ids(await all(plain, "price:45"))).toEqual(["p10"]); // compared as the text "45"
    expect(ids(await all(plain, "in_stock:true AND rating:5"))).toEqual(expected((p) => p.in_stock && p.rating === 5));
    // top-level lists of scalars too, by element
    expect(ids(await all(plain, "tags:coffee"))).toEqual(expected((p) => p.tags.includes("coffee")));
    // filterable, but no object has it: no results, and a warning naming the field
    const none = await runCli(["--project", project, "--json", "search", plain, "things to buy", "--filter", "colour:red"]);
    expect(JSON.parse(none.stdout).results).toEqual([]);
    expect(JSON.parse(none.stderr).warnings[0].code).toBe("FILTER_FIELD_EMPTY");
  });
});

describe("bad filters are validation errors (exit 4) pointing at the column", () => {
  it.each([
    ["price:>cheap", 8, "expected a float"],
    ["sku_note:x", 1, "not a filterable field"],
    ["title:shoes", 1, "not a filterable field"],
    ["maker.name:Sonora", 1, "not a filterable field"],
    ["in_stock:>0", 1, "bool field"],
    ["price:<100 in_stock:true", 12, "expected AND, OR"],
    ['category:"books', 10, "never closed"],
  ])("%s", async (filter, column, message) => {
    const result = await runCli(["--project", project, "--json", "search", typed, "x", "--filter", filter]);
    expect(result.exitCode).toBe(4);
    expect(result.stdout).toBe("");
    const error = JSON.parse(result.stderr).errors[0];
    expect(error.code).toBe("INVALID_FILTER");
    expect(error.message).toContain(message);
    expect(error.issues[0]).toMatchObject({ path: "filter", column });
  });

  it("an unnamed nested field is refused with the reason", async () => {
    const result = await runCli(["--project", project, "search", plain, "x", "--filter", "maker.country:JP"]);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain("nested field");
  });

  it("shows the filter with a caret under the column for people", async () => {
    const result = await runCli(["--project", project, "search", typed, "x", "--filter", "price:>cheap"]);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain("  price:>cheap\n         ^");
  });
});

describe("values that cannot be read as the declared type", () => {
  it("mark the object ERROR for that index, naming the field, without stopping the batch", async () => {
    const bad = [
      { id: "bad-price", title: "Broken", description: "x", category: "misc", price: "cheap", rating: 1, in_stock: true, released: "2020-01-01" },
      { id: "bad-date", title: "Undated", description: "y", category: "misc", price: 1, rating: 1, in_stock: true, released: "last week" },
      { id: "good", title: "Fine lamp", description: "a lamp", category: "misc", price: 5, rating: 2, in_stock: false, released: "2020-01-01" },
    ];
    await cliJson(project, ["objects", "add", "-"], { input: bad.map((o) => JSON.stringify(o)).join("\n") });
    // --wait prints the counts and exits 7: objects could not be indexed
    const waited = await runCli(["--project", project, "--json", "index", "status", typed, "--wait"]);
    expect(waited.exitCode, waited.stderr).toBe(7);
    const status = JSON.parse(waited.stdout);
    expect(status.status).toMatchObject({ ERROR: 2, READY: products.length + 1, UPLOADED: 0, PROCESSING: 0 });
    const info = await cliJson(project, ["objects", "get", "bad-price"]);
    const state = info.status.indexes.find((i: { id: string }) => i.id === typed);
    expect(state).toMatchObject({ status: "ERROR", searchable: false });
    expect(state.error).toContain('field "price": expected a float, got "cheap"');
    // the other indexes have no types: the object is fine there
    expect(info.status.indexes.find((i: { id: string }) => i.id === plain).status).toBe("READY");
    expect(ids(await all(typed, "category:misc"))).toEqual(["good"]);

    // fixing the value clears the error
    await cliJson(project, ["objects", "add", "-"], { input: JSON.stringify({ ...bad[0], price: 3 }) });
    expect((await runCli(["--project", project, "index", "status", typed, "--wait"])).exitCode).toBe(7); // bad-date still fails
    expect(ids(await all(typed, "category:misc"))).toEqual(["bad-price", "good"]);
    expect((await cliJson(project, ["index", "status", typed])).status.ERROR).toBe(1);
  });
});

describe("fields that hold lists", () => {
  const lists = tempProject();
  const ITEMS = [
    { id: "a", title: "Rain jacket", sizes: [38, 40, 42], tags: ["sale", "rain"] },
    { id: "b", title: "Wool sweater", sizes: 44, tags: "sale" },
    { id: "c", title: "Canvas tote", sizes: [], tags: [] },
    { id: "d", title: "Trail shoes", sizes: [39, null], tags: ["trail"] },
    { id: "e", title: "Winter parka", variants: [{ size: "M" }] },
  ];
  let index = "";
  const find = async (filter: string) => (await cliJson<Response>(lists, ["search", index, "things to wear", "--filter", filter, "--limit", "100"])).results.map((r) => r.id).sort();

  beforeAll(async () => {
    await cliJson(lists, ["objects", "add", "-"], { input: ITEMS.map((o) => JSON.stringify(o)).join("\n") });
    // a list of objects cannot be filtered: index create says so, and names the field
    const created = await runCli(["--project", lists, "--json", "index", "create", "--filterable", "sizes,tags,variants", "--field-type", "sizes=int"]);
    expect(created.exitCode, created.stderr).toBe(0);
    index = JSON.parse(created.stdout).id;
    const { warnings } = JSON.parse(created.stderr);
    expect(warnings).toEqual([{ code: "FILTER_FIELD_LISTS", message: expect.stringContaining('"variants" (in 1 of 5 sampled objects)') }]);
    await cliJson(lists, ["index", "status", index, "--wait"]);
  });

  it.each([
    ["tags:sale", ["a", "b"]], // a list element, and a scalar
    ["NOT tags:sale", ["c", "d", "e"]], // everything else: an empty list and a missing field included
    ["tags:*", ["a", "b", "d"]], // an empty list has no value
    ["sizes:40", ["a"]],
    ["sizes:[39 TO 41]", ["a", "d"]], // any element within the range: 40 in a, 39 in d
    ["sizes:{40 TO 42}", []], // a has 40 and 42, neither strictly inside
    ["sizes:>42", ["b"]],
    ["sizes:<39", ["a"]],
    ["NOT sizes:[39 TO 41]", ["b", "c", "e"]],
  ])("%s", async (filter, expectedIds) => {
    expect(await find(filter)).toEqual(expectedIds);
  });

  it("an element that cannot be read as the declared type puts the object in ERROR, naming the element", async () => {
    await cliJson(lists, ["objects", "add", "-"], { input: JSON.stringify({ id: "f", title: "Odd socks", sizes: [40, "large"] }) });
    expect((await runCli(["--project", lists, "index", "status", index, "--wait"])).exitCode).toBe(7);
    const state = (await cliJson(lists, ["objects", "get", "f"])).status.indexes[0];
    expect(state).toMatchObject({ status: "ERROR", error: expect.stringContaining('field "sizes": element 2 of the list: expected an int, got "large"') });
  });

  it("objects delete --filter deletes by list element", async () => {
    const deleted = await cliJson(lists, ["objects", "delete", "--filter", "tags:rain OR tags:trail", "--index", index, "--yes"]);
    expect(deleted).toEqual({ count: 2, deleted: expect.arrayContaining(["a", "d"]) });
    expect(await find("tags:*")).toEqual(["b"]);
  });
});

describe("index creation checks the field rules", () => {
  it.each([
    [["--crawlable", "title", "--searchable", "title,body"], "configuration.fields.searchable.allow.1"],
    [["--filterable", "price", "--field-type", "rating=int"], "configuration.fields.types.rating"],
    [["--field-type", "price=money"], "configuration.fields.types.price"],
  ])("%j is refused (exit 4) at %s", async (args, issuePath) => {
    const result = await runCli(["--project", project, "--json", "index", "create", ...args]);
    expect(result.exitCode).toBe(4);
    expect(JSON.parse(result.stderr).errors[0].issues[0].path).toBe(issuePath);
  });
});
