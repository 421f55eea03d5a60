import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseCreateIndexBody } from "../../../src/engine/config.js";
import { batchFilters, columnsToAdd, columnStorage, fieldResolver, filterColumn, filterColumnPath, filterValues, isListColumn, listColumn, MAX_FILTER_COLUMNS, namedFilterFields, type FilterColumnType } from "../../../src/engine/filter-fields.js";

const config = (fields: object = {}) => parseCreateIndexBody({ configuration: { index_type: { name: "text" }, fields } }).configuration;

const product = { id: "p1", title: "Shoes", price: "89.90", in_stock: true, tags: ["a"], maker: { country: "UK", founded: 1990 }, note: null };

describe("filter columns", () => {
  it("derives a safe column name from any path, and back", () => {
    expect(filterColumn("price")).toBe("f_7072696365");
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", minLength: 1 }), (path) => {
        const column = filterColumn(path);
        expect(column).toMatch(/^f_[0-9a-f]+$/);
        expect(filterColumnPath(column)).toBe(path);
        expect(listColumn(path)).toBe(`l_${column.slice(2)}`);
        expect(filterColumnPath(listColumn(path))).toBe(path);
        expect([isListColumn(column), isListColumn(listColumn(path))]).toEqual([false, true]);
      }),
    );
    expect(filterColumnPath("vector")).toBeNull();
    expect(filterColumnPath("f_7")).toBeNull();
  });
});

describe("filterValues", () => {
  it("reads named fields as their declared types, nested ones included", () => {
    const c = config({ filterable: { allow: ["price", "in_stock", "maker.country", "maker.founded", "missing"] }, types: { price: "float", in_stock: "bool", "maker.founded": "int" } });
    const read = filterValues(product, "p1", c, namedFilterFields(c));
    expect(read.errors).toEqual([]);
    expect(Object.fromEntries(read.values)).toEqual({ price: 89.9, in_stock: true, "maker.country": "UK", "maker.founded": 1990, missing: null });
  });

  it("reports every declared field whose value cannot be read, by name", () => {
    const c = config({ types: { price: "int", tags: "string", title: "datetime" } });
    const read = filterValues(product, "p1", c, namedFilterFields(c));
    expect(read.errors).toEqual(['field "price": expected an int, got "89.90"', 'field "title": expected an RFC 3339 datetime, got "Shoes"']);
    expect(read.values.get("tags")).toEqual(["a"]);
  });

  it("reads a list's elements as the field's type: distinct, nulls left out, an empty list no value", () => {
    const c = config({ types: { sizes: "int", tags: "string", flags: "bool", seen: "datetime", none: "string" } });
    const read = filterValues({ sizes: ["38", 39, 38, null], tags: ["b", 1, true], flags: [true, "false"], seen: ["2024-03-14"], none: [null] }, "x", c, namedFilterFields(c));
    expect(read.errors).toEqual([]);
    expect(Object.fromEntries(read.values)).toEqual({ id: "x", sizes: [38, 39], tags: ["b", "1", "true"], flags: [true, false], seen: [Date.UTC(2024, 2, 14)], none: null });
  });

  it("an element a declared field cannot read is an error naming the element; undeclared, the list has no value", () => {
    const declared = config({ types: { sizes: "int", variants: "string" } });
    const objects = { sizes: [38, "M"], variants: [{ size: "M" }] };
    expect(filterValues(objects, "x", declared, namedFilterFields(declared)).errors).toEqual([
      'field "sizes": element 2 of the list: expected an int, got "M"',
      'field "variants": element 1 of the list is an object: list elements are filtered on when they are text, numbers or booleans',
    ]);
    const undeclared = config({ filterable: { allow: ["variants", "nested"] } });
    const read = filterValues({ variants: [{ size: "M" }], nested: [["a"]] }, "x", undeclared, namedFilterFields(undeclared));
    expect(read.errors).toEqual([]);
    expect(Object.fromEntries(read.values)).toEqual({ variants: null, nested: null });
  });

  it("without filterable.allow, finds every top-level scalar field and list of scalars as strings, id from the object's id", () => {
    const c = config({ filterable: { deny: ["title"] }, types: { price: "float" } });
    const read = filterValues(product, "stored-id", c, namedFilterFields(c));
    expect(Object.fromEntries(read.values)).toEqual({ price: 89.9, id: "stored-id", in_stock: "true", tags: ["a"] });
    expect(filterValues({ codes: [1, false, { a: 1 }] }, "x", c, namedFilterFields(c)).values.get("codes")).toBeNull();
  });

  it("without filterable.allow, finds no field under an empty key (it would have no column name, and no filter names it)", () => {
    const c = config();
    for (const value of ["e", ["e"]]) expect([...filterValues({ "": value, tag: value }, "x", c, namedFilterFields(c)).values.keys()]).toEqual(["id", "tag"]);
    expect([...batchFilters([{ id: "x", object: { "": ["e"] } }], c).columns.keys()]).toEqual([filterColumn("id")]);
  });

  it("undeclared objects have no value, and are no error; lists of scalars are read as text", () => {
    const c = config({ filterable: { allow: ["tags", "maker"] } });
    const read = filterValues(product, "p1", c, namedFilterFields(c));
    expect(read.errors).toEqual([]);
    expect(Object.fromEntries(read.values)).toEqual({ tags: ["a"], maker: null });
  });

  it("a field that is not crawlable is never filterable", () => {
    const c = config({ crawlable: { deny: ["price"] } });
    expect(filterValues(product, "p1", c, namedFilterFields(c)).values.has("price")).toBe(false);
  });
});

describe("batchFilters", () => {
  it("stores each object's values by column, sets aside objects that fail their types, and lists the columns", () => {
    const c = config({ types: { price: "float", in_stock: "bool" } });
    const batch = batchFilters(
      [
        { id: "a", object: { id: "a", price: 2.5, in_stock: true, colour: "red" } },
        { id: "b", object: { price: "cheap" } },
        { id: "c", object: {} },
      ],
      c,
    );
    expect(batch.records.get("a")).toEqual({ [filterColumn("id")]: "a", [filterColumn("price")]: 2.5, [filterColumn("in_stock")]: 1, [filterColumn("colour")]: "red" });
    expect(batch.records.get("c")).toEqual({ [filterColumn("id")]: "c" }); // the id, though the object has no id field
    expect(batch.records.has("b")).toBe(false);
    expect(batch.errors.get("b")).toBe('field "price": expected a float, got "cheap"');
    expect(Object.fromEntries(batch.columns)).toEqual({
      [filterColumn("price")]: "double",
      [filterColumn("in_stock")]: "double",
      [filterColumn("id")]: "string",
      [filterColumn("colour")]: "string",
    });
    expect(batch.named).toEqual(new Set(["price", "in_stock"].flatMap((path) => [filterColumn(path), listColumn(path)])));
  });

  it("stores lists in the field's list column, next to the scalar column other objects fill", () => {
    const c = config({ filterable: { allow: ["tags", "sizes"] }, types: { sizes: "int" } });
    const batch = batchFilters(
      [
        { id: "a", object: { tags: ["sale", "new"], sizes: [38, 39] } },
        { id: "b", object: { tags: "sale", sizes: 40 } },
        { id: "c", object: { tags: [], sizes: [null] } },
      ],
      c,
    );
    expect(batch.records.get("a")).toEqual({ [listColumn("tags")]: ["sale", "new"], [listColumn("sizes")]: [38, 39] });
    expect(batch.records.get("b")).toEqual({ [filterColumn("tags")]: "sale", [filterColumn("sizes")]: 40 });
    expect(batch.records.get("c")).toEqual({});
    expect(Object.fromEntries(batch.columns)).toEqual({
      [filterColumn("tags")]: "string",
      [filterColumn("sizes")]: "double",
      [listColumn("tags")]: "string[]",
      [listColumn("sizes")]: "double[]",
    });
    expect([columnStorage(c, listColumn("sizes")), columnStorage(c, filterColumn("sizes")), columnStorage(c, "vector")]).toEqual(["double[]", "double", null]);
  });
});

describe("columnsToAdd", () => {
  const fields = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `k${from + i}`);
  const columns = (entries: [string, FilterColumnType][]) => new Map(entries);

  it("caps the fields found on their own, not the columns: a field's list column joins its scalar one", () => {
    const present = new Set(fields(MAX_FILTER_COLUMNS).map(filterColumn));
    const batch = columns([
      [listColumn("k0"), "string[]"], // a field that has a column: always
      [filterColumn("new"), "string"], // a field more: over the cap
      [listColumn("new"), "string[]"],
    ]);
    expect(columnsToAdd(present, { columns: batch, named: new Set() })).toEqual({ add: columns([[listColumn("k0"), "string[]"]]), capped: true });
  });

  it("counts a new field's two columns once, and always adds named fields' columns", () => {
    const present = new Set(fields(MAX_FILTER_COLUMNS - 1).map(listColumn));
    const batch = columns([
      [filterColumn("a"), "string"],
      [listColumn("a"), "string[]"],
      [filterColumn("b"), "string"],
      [listColumn("sizes"), "double[]"],
    ]);
    const { add, capped } = columnsToAdd(present, { columns: batch, named: new Set([filterColumn("sizes"), listColumn("sizes")]) });
    expect([[...add.keys()], capped]).toEqual([[filterColumn("a"), listColumn("a"), listColumn("sizes")], true]);
    expect(columnsToAdd(new Set([...present, ...add.keys()]), { columns: batch, named: new Set() })).toEqual({ add: new Map(), capped: true });
  });
});

describe("fieldResolver", () => {
  const c = config({ filterable: { deny: ["secret"] }, types: { price: "float", "maker.founded": "int" } });
  const resolve = fieldResolver(c, new Set([filterColumn("price"), filterColumn("maker.founded")]));

  it("resolves filterable fields to their column and type", () => {
    expect(resolve("price")).toEqual({ kind: "column", column: filterColumn("price"), type: "float" });
    expect(resolve("maker.founded")).toEqual({ kind: "column", column: filterColumn("maker.founded"), type: "int" });
  });

  it("resolves a field with lists to its list column too, or to it alone", () => {
    const both = fieldResolver(c, new Set([filterColumn("tags"), listColumn("tags"), listColumn("sizes")]));
    expect(both("tags")).toEqual({ kind: "column", column: filterColumn("tags"), list: listColumn("tags"), type: "string" });
    expect(both("sizes")).toEqual({ kind: "column", list: listColumn("sizes"), type: "string" });
  });

  it("a filterable field no object has given a value matches nothing", () => {
    expect(resolve("colour")).toEqual({ kind: "empty", type: "string" });
  });

  it("refuses denied fields and unnamed nested fields, listing the filterable ones", () => {
    expect(resolve("secret")).toMatchObject({ kind: "refused", message: '"secret" is not a filterable field of this index', hint: "Filterable fields: maker.founded, price." });
    expect(resolve("maker.country")).toMatchObject({ kind: "refused", message: expect.stringContaining("nested field") });
  });
});
