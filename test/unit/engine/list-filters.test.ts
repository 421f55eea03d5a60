/**
 * Filters on fields that hold lists, against real LanceDB: an object matches a condition when its
 * scalar value or any element of its list does. Random filters over objects whose fields hold
 * scalars, lists, empty lists or nothing are compiled and run, before and after the worker's
 * indexes are built, and compared with the same rule evaluated here on the objects' values.
 */
import fc from "fast-check";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCreateIndexBody } from "../../../src/engine/config.js";
import { readLiteral, storedValue, type FieldValue } from "../../../src/engine/field-types.js";
import { batchFilters, fieldResolver, fieldType, filterValues, namedFilterFields } from "../../../src/engine/filter-fields.js";
import { formatFilter, parseFilter, type FilterNode } from "../../../src/engine/search/filter-syntax.js";
import { compileClause, compileFilter } from "../../../src/engine/search/filters.js";
import { LanceStore } from "../../../src/engine/store/lance-store.js";
import { filterTreeArb } from "../../helpers/filter-arbitraries.js";
import { unit } from "../../helpers/store-rows.js";

const config = parseCreateIndexBody({
  configuration: { index_type: { name: "text" }, fields: { filterable: { allow: ["tags", "sizes", "price", "seen", "flags"] }, types: { sizes: "int", price: "float", seen: "datetime", flags: "bool" } } },
}).configuration;
const TAGS = ["sale", "new", "it's", "b", "a", "Sale"];
const DAYS = ["2024-01-01", "2024-02-01", "2024-03-01", "2024-04-01"];

/** Objects cycling through every shape a field can take: missing, null, a scalar, a list, an empty list, a list with nulls. */
function objects(): { id: string; object: Record<string, unknown> }[] {
  const pick = <T,>(values: readonly T[], i: number, k: number): T => values[(i * 7 + k * 3) % values.length] as T;
  return Array.from({ length: 48 }, (_, i) => {
    const shape = i % 6;
    const object: Record<string, unknown> = { id: `o${i}` };
    const value = (values: readonly unknown[]) => {
      if (shape === 0) return undefined;
      if (shape === 1) return null;
      if (shape === 2) return pick(values, i, 0);
      if (shape === 3) return [];
      if (shape === 4) return [pick(values, i, 1), null, pick(values, i, 2)];
      return [pick(values, i, 3), pick(values, i, 4), pick(values, i, 5)];
    };
    for (const [field, values] of [["tags", TAGS], ["sizes", [36, 38, 40, 42, -1]], ["seen", DAYS], ["flags", [true, false]]] as const) {
      const v = value(values);
      if (v !== undefined) object[field] = v;
    }
    if (i % 3 !== 0) object.price = (i % 10) * 1.5;
    return { id: `o${i}`, object };
  });
}

/** The rule, evaluated on an object's filter values: a scalar or any element of a list. */
function matches(node: FilterNode, values: Map<string, FieldValue | FieldValue[] | null>): boolean {
  switch (node.kind) {
    case "and":
      return node.items.every((item) => matches(item, values));
    case "or":
      return node.items.some((item) => matches(item, values));
    case "not":
      return !matches(node.item, values);
  }
  const value = values.get(node.field.path) ?? null;
  if (value === null) return false;
  const type = fieldType(config, node.field.path);
  const read = (text: string) => {
    const reading = readLiteral(type, text);
    if (!reading.ok) throw new Error(reading.message);
    return storedValue(reading.value);
  };
  const test = (element: FieldValue): boolean => {
    const v = storedValue(element);
    switch (node.kind) {
      case "exists":
        return true;
      case "match":
        return v === read(node.value.text);
      case "compare": {
        const bound = read(node.value.text);
        return node.op === ">" ? v > bound : node.op === ">=" ? v >= bound : node.op === "<" ? v < bound : v <= bound;
      }
      case "range": {
        const lower = node.lower ? read(node.lower.value.text) : null;
        const upper = node.upper ? read(node.upper.value.text) : null;
        const aboveLower = lower === null || (node.lower?.inclusive ? v >= lower : v > lower);
        const belowUpper = upper === null || (node.upper?.inclusive ? v <= upper : v < upper);
        return aboveLower && belowUpper;
      }
    }
  };
  return Array.isArray(value) ? value.some(test) : test(value);
}

const f = (path: string) => ({ path, column: 1 });
const lit = (text: string) => ({ text, quoted: true, column: 1 });
const boundArb = (values: fc.Arbitrary<string>) => fc.option(fc.record({ value: values.map(lit), inclusive: fc.boolean() }), { nil: null });
/** Conditions on each field with values of its type (some stored, some between stored ones). */
const conditionArb: fc.Arbitrary<FilterNode> = fc.oneof(
  ...(
    [
      ["tags", fc.constantFrom(...TAGS, "zzz", "")],
      ["sizes", fc.constantFrom("36", "38", "39", "40", "42", "-1", "0", "100")],
      ["price", fc.constantFrom("0", "1.5", "4.5", "7", "13.5")],
      ["seen", fc.constantFrom(...DAYS, "2024-02-15", "2023-12-31")],
    ] as const
  ).flatMap(([field, values]) => [
    fc.record({ kind: fc.constant("match" as const), field: fc.constant(f(field)), value: values.map(lit) }),
    fc.record({ kind: fc.constant("exists" as const), field: fc.constant(f(field)) }),
    fc.record({ kind: fc.constant("compare" as const), field: fc.constant(f(field)), op: fc.constantFrom(">", ">=", "<", "<=") as fc.Arbitrary<">">, value: values.map(lit) }),
    fc.record({ kind: fc.constant("range" as const), field: fc.constant(f(field)), lower: boundArb(values), upper: boundArb(values) }),
  ]),
  fc.record({ kind: fc.constant("match" as const), field: fc.constant(f("flags")), value: fc.constantFrom("true", "false").map(lit) }),
);
const filterArb = filterTreeArb(conditionArb, 4);

const dir = mkdtempSync(path.join(tmpdir(), "semsearch-list-filters-"));
const storePromise = LanceStore.open(dir);
const TABLE = "index_lists";
const stored = objects();
const values = new Map(stored.map(({ id, object }) => [id, filterValues(object, id, config, namedFilterFields(config)).values]));
afterAll(async () => (await storePromise).close());

beforeAll(async () => {
  const store = await storePromise;
  await store.createIndexTable(TABLE, 4);
  // Two batches: the list columns arrive with the second, next to scalar columns the first filled.
  for (const batch of [stored.slice(0, 3), stored.slice(3)]) {
    const filters = batchFilters(batch, config);
    expect([...filters.errors]).toEqual([]);
    await store.ensureFilterColumns(TABLE, filters.columns);
    await store.upsertIndexRows(TABLE, batch.map(({ id }, i) => ({ id, seq: i + 1, text: "t", vector: unit(1, i), filters: filters.records.get(id) })));
  }
});

async function expectSame(filter: FilterNode, store: LanceStore): Promise<void> {
  const where = compileFilter(filter, fieldResolver(config, await store.filterColumns(TABLE)));
  const expected = stored.filter(({ id }) => matches(filter, values.get(id) as Map<string, FieldValue | FieldValue[] | null>)).map(({ id }) => id);
  expect((await store.idsWhere(TABLE, where)).sort(), `${formatFilter(filter)}\n${where}`).toEqual(expected.sort());
}

describe("filters on list fields (real LanceDB)", () => {
  it("match an object when its scalar or any element of its list does", async () => {
    const store = await storePromise;
    const ids = async (filter: string) => (await store.idsWhere(TABLE, compileFilter(parseFilter(filter) as FilterNode, fieldResolver(config, await store.filterColumns(TABLE))))).sort();
    // o2: "tags": "a" (a scalar); o4: ["b", null, "a"]-like lists; o3: [] (no value)
    const tagsOf = (id: string) => stored.find((o) => o.id === id)?.object.tags;
    expect(tagsOf("o3")).toEqual([]);
    expect(await ids("tags:*")).not.toContain("o3");
    expect(await ids("NOT tags:*")).toContain("o3");
    const scalar = stored.find((o) => typeof o.object.tags === "string") as { id: string; object: { tags: string } };
    const list = stored.find((o) => Array.isArray(o.object.tags) && o.object.tags.length === 3) as { id: string; object: { tags: string[] } };
    expect(await ids(`tags:"${scalar.object.tags}"`)).toContain(scalar.id);
    expect(await ids(`tags:"${list.object.tags[2]}"`)).toContain(list.id);
    expect(await ids(`NOT tags:"${list.object.tags[2]}"`)).not.toContain(list.id);
  });

  it("agree with the rule on random filters, before and after the indexes are built", async () => {
    const store = await storePromise;
    await fc.assert(fc.asyncProperty(filterArb, (filter) => expectSame(filter, store)), { numRuns: 150 });
    await store.optimizeIndexTable(TABLE);
    expect(Object.values(Object.fromEntries(await store.filterIndexes(TABLE)))).toContain("LabelList");
    await fc.assert(fc.asyncProperty(filterArb, (filter) => expectSame(filter, store)), { numRuns: 150 });
  });

  it("need no more of LanceDB's SQL parser than their cost says (47 parses, see search/filters.ts)", async () => {
    const store = await storePromise;
    const resolver = fieldResolver(config, await store.filterColumns(TABLE));
    for (const text of ["NOT sizes:{-400 TO -1}", "NOT sizes:[-400 TO -1]", "NOT sizes:[-40 TO -1]", "NOT (sizes:-1 OR sizes:-2)", "NOT tags:a", "NOT sizes:<-1", "NOT seen:*", "NOT price:[-1 TO 2]"]) {
      const clause = compileClause(parseFilter(text) as FilterNode, resolver);
      const spare = 47 - clause.cost;
      await expect(store.idsWhere(TABLE, `${"(".repeat(spare)}${clause.sql}${")".repeat(spare)}`), `${text}: cost ${clause.cost}`).resolves.toBeDefined();
    }
  });
});
