/**
 * Filters on fields that hold lists, attacked from the outside through the real CLI and `semsearch
 * serve`: hostile elements and shapes, more discovered fields than the cap counts with lists among
 * them, and a worker killed as the first list arrives. Expected sets are computed here from the
 * objects with the documented rule (docs/behaviour.md, "Lists"): a condition matches when the
 * field's value, or any element of its list, does; NOT is everything else.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliJson, runCli, tempProject } from "../helpers/cli.js";
import { call, serve, type Served } from "../helpers/serve.js";
import { waitFor } from "../helpers/wait.js";

type Json = Record<string, unknown>;
interface Response {
  results: { id: string }[];
}
type Type = "string" | "int" | "float" | "datetime";
type Value = string | number;
/** An object as an index holds it: its values of a field (null: none) and the field's type there. */
interface Held {
  id: string;
  values: (field: string) => Value[] | null;
  type: (field: string) => Type;
}
/** A filter's text and what it selects. */
interface Filter {
  text: string;
  test: (object: Held) => boolean;
}

/**
 * A value as the documented rule reads it for a field of `type`: the comparable value, undefined
 * when it cannot be read (an ERROR for a declared field). Only the forms the objects below use.
 */
function readValue(type: Type, value: unknown): Value | undefined {
  if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") return undefined;
  if (type === "string") return String(value);
  if (type === "datetime") return typeof value === "string" ? Date.parse(value) : undefined;
  const form = type === "int" ? /^[+-]?\d+$/ : /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
  const n = typeof value === "number" ? value : typeof value === "string" && form.test(value) ? Number(value) : NaN;
  return Number.isFinite(n) && (type === "float" || Number.isSafeInteger(n)) ? n + 0 : undefined;
}

/** Text compares by UTF-8 bytes, as LanceDB does; numbers as numbers. */
const compare = (a: Value, b: Value) => (typeof a === "string" ? Buffer.compare(Buffer.from(a), Buffer.from(String(b))) : a - (b as number));
const quote = (value: string) => `"${value.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
/** Whether any value of the field passes `test`, given the filter's literal read as the field's type. */
const some = (field: string, test: (value: Value, read: (text: string) => Value) => boolean) => (object: Held) =>
  object.values(field)?.some((value) => test(value, (text) => readValue(object.type(field), text) as Value)) ?? false;
const match = (field: string, value: string): Filter => ({ text: `${field}:${quote(value)}`, test: some(field, (v, read) => compare(v, read(value)) === 0) });
const range = (field: string, lower: string | null, upper: string | null, inclusive: [boolean, boolean] = [true, true]): Filter => ({
  text: `${field}:${inclusive[0] ? "[" : "{"}${lower ?? "*"} TO ${upper ?? "*"}${inclusive[1] ? "]" : "}"}`,
  test: some(field, (v, read) => {
    const above = lower === null || (inclusive[0] ? compare(v, read(lower)) >= 0 : compare(v, read(lower)) > 0);
    return above && (upper === null || (inclusive[1] ? compare(v, read(upper)) <= 0 : compare(v, read(upper)) < 0));
  }),
});
const above = (field: string, value: string): Filter => ({ text: `${field}:>${value}`, test: some(field, (v, read) => compare(v, read(value)) > 0) });
const not = (filter: Filter): Filter => ({ text: `NOT (${filter.text})`, test: (object) => !filter.test(object) });
const and = (...filters: Filter[]): Filter => ({ text: filters.map((f) => `(${f.text})`).join(" AND "), test: (object) => filters.every((f) => f.test(object)) });
const or = (...filters: Filter[]): Filter => ({ text: filters.map((f) => `(${f.text})`).join(" OR "), test: (object) => filters.some((f) => f.test(object)) });
const exists = (field: string): Filter => ({ text: `${field}:*`, test: (object) => object.values(field) !== null });

/** The values of a field (null: none), or "error" when a declared field's value or an element cannot be read. */
function valuesOf(object: Json, field: string, type: Type, declared: boolean): Value[] | null | "error" {
  const value = object[field];
  if (value === undefined || value === null) return null;
  const elements = Array.isArray(value) ? value.filter((element) => element !== null) : [value];
  const read = elements.map((element) => readValue(type, element));
  if (read.some((v) => v === undefined)) return declared ? "error" : null;
  return read.length > 0 ? (read as Value[]) : null;
}

describe("hostile lists, filtered over HTTP", () => {
  const project = tempProject();
  const TYPES: Record<string, Type> = { sizes: "int", price: "float", when: "datetime" };
  const LONG = "x".repeat(50_000); // (stored whole; a filter in a URL cannot spell it, a range finds it)
  const OBJECTS: Json[] = [
    { id: "quotes", title: "quotes", tags: ["it's", 'a"b', "back\\slash", "emoji 🎉", ""], sizes: [-0, 7] },
    { id: "long", title: "long", tags: [LONG, "short"], price: [1e300, -1e300, 5e-324] },
    { id: "many", title: "many", tags: Array.from({ length: 10_000 }, (_, i) => `t${i}`), sizes: Array.from({ length: 10_000 }, (_, i) => i - 5_000) },
    { id: "mixed", title: "mixed", tags: [1, "a", true, null, 2.5], sizes: ["3", null, 40], price: [2, "2.5"] },
    { id: "nested", title: "nested", tags: [["a"], "b"], when: ["2024-05-01T14:00:00+02:00", "2024-05-01T11:00:00-01:00"] },
    { id: "object", title: "object", tags: { a: 1 }, sizes: 40, price: 2.5 },
    { id: "scalar", title: "scalar", tags: "a", sizes: 3, when: "2024-05-02" },
    { id: "nulls", title: "nulls", tags: [null, null], sizes: [], price: [null] },
    { id: "dates", title: "dates", when: ["2024-05-01", "2023-12-31T23:30:00-01:00"], tags: ["b", "a"] },
    // a key no filter can name, with a list and a scalar: it has no column, and blocks nothing
    { id: "empty-key", title: "empty key", "": ["e"], tags: ["a"] },
    { id: "empty-key-2", title: "empty key", "": "e", sizes: [1, 2] },
    // declared fields whose elements cannot be read: ERROR, in no result
    { id: "bool-int", title: "bool in int", sizes: [1, true] },
    { id: "list-in-list", title: "nested sizes", sizes: [[1], 2] },
  ];
  const FILTERS: Filter[] = [
    ...["it's", 'a"b', "back\\slash", "emoji 🎉", "", "short", "t9999", "a", "1", "true", "2.5", "b"].map((value) => match("tags", value)),
    range("tags", "x", "y", [false, false]),
    or(match("tags", "t5000"), match("tags", "it's"), match("tags", "b")),
    not(match("tags", "a")),
    not(not(match("tags", "b"))),
    exists("tags"),
    not(exists("sizes")),
    match("sizes", "0"),
    match("sizes", "-0"),
    range("sizes", "0", "0"),
    range("sizes", "38", "41"),
    range("sizes", "5", "1"),
    range("sizes", "4999", null, [false, true]),
    range("sizes", null, "-5000"),
    range("sizes", "2", "3", [false, true]),
    range("sizes", "-100000", "100000", [false, false]),
    and(range("sizes", "1", "3"), not(range("sizes", "40", "40"))),
    range("price", "1e299", null),
    range("price", null, "-1e299"),
    range("price", "0", "1e-300", [false, true]),
    range("price", "2", "2.5", [false, true]),
    match("price", "2"),
    match("when", "2024-05-01T12:00:00Z"),
    range("when", "2024-05-01", "2024-05-01T12:00:00Z", [true, false]),
    above("when", "2024-05-01T12:00:00Z"),
    and(match("tags", "a"), or(range("sizes", "3", "3"), exists("when"))),
  ];
  let server: Served;
  let typed = "";
  let discovered = "";
  /** The objects an index holds (ERROR ones left out), their values read as it reads them. */
  const held = (types: Record<string, Type>): Held[] =>
    OBJECTS.flatMap((object) => {
      const values = new Map(["tags", "sizes", "price", "when"].map((field) => [field, valuesOf(object, field, types[field] ?? "string", field in types)]));
      if ([...values.values()].includes("error")) return [];
      return [{ id: object.id as string, values: (field) => values.get(field) as Value[] | null, type: (field) => types[field] ?? "string" }];
    });

  beforeAll(async () => {
    await cliJson(project, ["objects", "add", "-"], { input: OBJECTS.map((o) => JSON.stringify(o)).join("\n") });
    const types = Object.entries(TYPES).flatMap(([field, type]) => ["--field-type", `${field}=${type}`]);
    const created = await runCli(["--project", project, "--json", "index", "create", "--searchable", "title", "--highlights", "--filterable", "tags,sizes,price,when", ...types, "--wait"]);
    expect(created.exitCode, created.stderr).toBe(7); // the two objects whose sizes cannot be read
    typed = JSON.parse(created.stdout).id;
    // no filterable.allow: every top-level field is found, text and lists of text, the empty key left out
    const found = await runCli(["--project", project, "--json", "index", "create", "--searchable", "title", "--wait"]);
    expect(found.exitCode, found.stderr).toBe(0);
    discovered = JSON.parse(found.stdout).id;
    server = await serve(project, ["--no-auth", "--no-access-log"]);
  });
  afterAll(async () => server?.stop());

  it("puts objects whose declared elements cannot be read in ERROR, and only those", async () => {
    expect((await call(`${server.url}/v1/indexes/${typed}/status`, null)).json).toEqual({ status: { UPLOADED: 0, PROCESSING: 0, READY: OBJECTS.length - 2, ERROR: 2 } });
    expect((await call(`${server.url}/v1/indexes/${discovered}/status`, null)).json).toEqual({ status: { UPLOADED: 0, PROCESSING: 0, READY: OBJECTS.length, ERROR: 0 } });
  });

  it("selects what the rule says, with highlights on, for every filter form", async () => {
    for (const [index, objects] of [[typed, held(TYPES)], [discovered, held({})]] as const) {
      for (const filter of FILTERS) {
        const params = new URLSearchParams({ query: "title", filter_query: filter.text, limit: "100", result_fields: "highlights" });
        const answer = await call(`${server.url}/v1/indexes/${index}/search?${params}`, null);
        expect(answer.status, `${filter.text.slice(0, 200)}: ${answer.text.slice(0, 500)}`).toBe(200);
        const expected = objects.filter(filter.test).map((object) => object.id).sort();
        expect((answer.json as Response).results.map((r) => r.id).sort(), `${index === typed ? "typed" : "discovered"}: ${filter.text.slice(0, 200)}`).toEqual(expected);
      }
    }
  });
});

describe("more discovered fields than the cap, some holding lists", () => {
  // 130 fields, each a text in one object and a list in the other: 260 columns, but 130 fields
  const FIELDS = Array.from({ length: 130 }, (_, i) => `k${i}`);
  const scalars: Json = { id: "scalars", title: "one value each", ...Object.fromEntries(FIELDS.map((field) => [field, "x"])) };
  const lists: Json = { id: "lists", title: "lists", ...Object.fromEntries(FIELDS.map((field) => [field, ["x", "y"]])) };

  it("keeps a field's lists once its single values have a column: the cap counts fields", async () => {
    const project = tempProject();
    await cliJson(project, ["objects", "add", "-"], { input: `${JSON.stringify(scalars)}\n${JSON.stringify(lists)}` });
    const { id } = await cliJson(project, ["index", "create", "--searchable", "title"]);
    const found = async (filter: string) => JSON.parse((await runCli(["--project", project, "--json", "search", id, "values", "--filter", filter])).stdout).results.map((r: { id: string }) => r.id).sort();
    const holding = (field: string, value: string) => [scalars, lists].filter((o) => ([] as unknown[]).concat(o[field]).includes(value)).map((o) => o.id).sort();
    // (searchable once indexed: the 260 columns' indexes, built afterwards, are not waited for)
    await waitFor("both objects searchable", async () => (await found("k0:x")).length === 2);
    const last = FIELDS.at(-1) as string;
    expect(await found(`${last}:y`)).toEqual(holding(last, "y"));
  });
});

describe("a worker killed as the first list of a field arrives", () => {
  const first = [
    { id: "a", title: "red apple", body: "a red apple", tags: "fruit" },
    { id: "b", title: "green pear", body: "a green pear", tags: "fruit" },
  ];
  const second = [
    { id: "c", title: "red cherry", body: "a red cherry", tags: ["fruit", "red"] },
    { id: "d", title: "blue plum", body: "a blue plum", tags: ["stone"] },
  ];
  const jsonl = (objects: object[]) => objects.map((o) => JSON.stringify(o)).join("\n");
  const holding = (objects: { id: string; tags: string | string[] }[], tags: string[]) => objects.filter((o) => tags.some((tag) => ([] as string[]).concat(o.tags).includes(tag))).map((o) => o.id).sort();

  it("searches with highlights before it resumes, and finds every list after", async () => {
    const project = tempProject();
    await cliJson(project, ["objects", "add", "-"], { input: jsonl(first) });
    // A foreground worker that dies the second time it adds filter columns: the first batch adds
    // the field's scalar column, the second its list column (to some of the index's tables).
    const worker = runCli(["--project", project, "worker", "run", "--poll-ms", "50"], { env: { SEMSEARCH_FAILPOINT: "worker:columns@2" } });
    await waitFor("the foreground worker", async () => (await cliJson(project, ["worker", "status"])).running);
    const { id } = await cliJson(project, ["index", "create", "--searchable", "title,body", "--highlights", "--filterable", "tags", "--wait"]);
    await cliJson(project, ["objects", "add", "-"], { input: jsonl(second) });
    expect((await worker).signal).toBe("SIGKILL");

    // Before it resumes (a worker the search starts dies at the same point), a filtered search with
    // highlights reads tables that hold different columns: it answers from what was indexed.
    const search = (filter: string, env = {}) => runCli(["--project", project, "--json", "search", id, "red fruit", "--filter", filter, "--result-fields", "highlights"], { env });
    const before = await search("tags:fruit", { SEMSEARCH_FAILPOINT: "worker:columns" });
    expect(before.exitCode, before.stderr).toBe(0);
    expect(JSON.parse(before.stdout).results.map((r: { id: string }) => r.id).sort()).toEqual(holding(first, ["fruit"]));

    expect((await runCli(["--project", project, "index", "status", id, "--wait"])).exitCode).toBe(0);
    for (const tags of [["fruit"], ["red", "stone"]]) {
      const after = await search(tags.map((tag) => `tags:${tag}`).join(" OR "));
      expect(after.exitCode, after.stderr).toBe(0);
      expect(JSON.parse(after.stdout).results.map((r: { id: string }) => r.id).sort(), tags.join()).toEqual(holding([...first, ...second], tags));
    }
  });
});
