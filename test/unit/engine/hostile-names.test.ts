/**
 * Field names and object keys that are members of Object.prototype. Any text is a field name, so
 * `constructor` or `__proto__` must be read and written as own keys everywhere, never reach the
 * prototype (a plain `record[name]` would find Object's constructor function, and a plain
 * `out["__proto__"] = value` would replace the prototype instead of adding a key).
 */
import { describe, expect, it } from "vitest";
import { parseCreateIndexBody } from "../../../src/engine/config.js";
import { FieldRules, valueAt } from "../../../src/engine/fields.js";
import { batchFilters, fieldResolver, fieldType, filterColumn, filterValues, namedFilterFields } from "../../../src/engine/filter-fields.js";
import { searchableText, segmentableFields, segmentDelimiter } from "../../../src/engine/indexing/extract.js";
import { segmentText } from "../../../src/engine/indexing/segment.js";
import { objectId } from "../../../src/engine/objects/parse.js";
import { projectObject } from "../../../src/engine/search/request.js";
import type { JsonObject } from "../../../src/engine/types.js";

const HOSTILE = ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf", "prototype", "__defineGetter__"] as const;

/** Objects are built from JSON, as objects add reads them: `__proto__` is then an own key. */
const json = (text: string) => JSON.parse(text) as JsonObject;
const config = (fields: object = {}, highlights = false) =>
  parseCreateIndexBody(JSON.parse(JSON.stringify({ configuration: { index_type: { name: "text", ...(highlights ? { highlights: { text: true } } : {}) }, fields } }))).configuration;
/** A configuration as JSON.parse gives it back from the catalog (own keys, ordinary prototype). */
const stored = (fields: object) => JSON.parse(JSON.stringify({ index_type: { name: "text" }, fields })) as ReturnType<typeof config>;

describe.each(HOSTILE)("field name %s", (name) => {
  const key = JSON.stringify(name);
  const object = json(`{"id":"o1",${key}:"alpha; beta","nested":{${key}:"deep"},"price":"2.5","secret":"s"}`);
  const without = json(`{"id":"o2","title":"plain"}`);

  it("field rules admit it and walk it like any other key", () => {
    const rules = new FieldRules(config({ searchable: { allow: [name, `nested.${name}`] } }));
    expect(rules.admits("searchable", name)).toBe(true);
    expect(rules.scalars("searchable", object)).toEqual([
      { path: name, value: "alpha; beta" },
      { path: `nested.${name}`, value: "deep" },
    ]);
    expect(new FieldRules(config({ searchable: { deny: [name] } })).admits("searchable", name)).toBe(false);
  });

  it("crawled copies it as an own key and never touches the prototype", () => {
    const crawled = new FieldRules(config({ crawlable: { deny: ["secret"] } })).crawled(object);
    expect(Object.getPrototypeOf(crawled)).toBe(Object.prototype);
    expect(Object.hasOwn(crawled, name)).toBe(true);
    expect(Object.getOwnPropertyDescriptor(crawled, name)?.value).toBe("alpha; beta");
    expect(Object.getOwnPropertyDescriptor(crawled.nested, name)?.value).toBe("deep");
    expect(Object.hasOwn(crawled, "secret")).toBe(false);
    expect(JSON.parse(JSON.stringify(crawled))).toEqual(JSON.parse(`{"id":"o1",${key}:"alpha; beta","nested":{${key}:"deep"},"price":"2.5"}`));
  });

  it("valueAt reads own keys only", () => {
    expect(valueAt(object, name)).toBe("alpha; beta");
    expect(valueAt(object, `nested.${name}`)).toBe("deep");
    expect(valueAt(without, name)).toBeUndefined();
    expect(valueAt(without, `title.${name}`)).toBeUndefined();
  });

  it("fieldType is string unless types names it (whatever else types holds)", () => {
    expect(fieldType(config({ types: { price: "float" } }), name)).toBe("string");
    expect(fieldType(stored({ types: { price: "float" } }), name)).toBe("string");
    expect(fieldType(config(JSON.parse(`{"types":{${key}:"float"}}`)), name)).toBe("float");
  });

  it("filterValues and batchFilters discover it, and read it as its declared type", () => {
    const discovered = config({ types: { price: "float" } });
    const read = filterValues(object, "o1", discovered, namedFilterFields(discovered));
    expect(read.errors).toEqual([]);
    expect(read.values.get(name)).toBe("alpha; beta");
    const batch = batchFilters([{ id: "o1", object }, { id: "o2", object: without }], discovered);
    expect(batch.errors.size).toBe(0);
    expect(batch.columns.get(filterColumn(name))).toBe("string");
    expect(Object.getOwnPropertyDescriptor(batch.records.get("o1"), filterColumn(name))?.value).toBe("alpha; beta");

    const typed = config(JSON.parse(`{"types":{${key}:"float"}}`));
    const numbers = [{ id: "n1", object: json(`{${key}:"2.5"}`) }, { id: "n2", object: json(`{${key}:"many"}`) }, { id: "n3", object: without }];
    const typedBatch = batchFilters(numbers, typed);
    expect(typedBatch.columns.get(filterColumn(name))).toBe("double");
    expect(typedBatch.records.get("n1")?.[filterColumn(name)]).toBe(2.5);
    expect(typedBatch.errors.get("n2")).toContain(`field "${name}"`);
    expect(typedBatch.records.get("n3")?.[filterColumn(name)]).toBeUndefined();
  });

  it("fieldResolver resolves it with its type, declared or not", () => {
    expect(fieldResolver(config({ types: { price: "float" } }), new Set())(name)).toEqual({ kind: "empty", type: "string" });
    expect(fieldResolver(stored({ types: { price: "float" } }), new Set([filterColumn(name)]))(name)).toEqual({ kind: "column", column: filterColumn(name), type: "string" });
    expect(fieldResolver(config(JSON.parse(`{"types":{${key}:"int"}}`)), new Set())(name)).toEqual({ kind: "empty", type: "int" });
    expect(fieldResolver(config({ filterable: { allow: ["price"] } }), new Set())(name).kind).toBe("refused");
  });

  it("segmentDelimiter is set only by its own entry", () => {
    expect(segmentDelimiter(config({ segment_delimiter: { body: ";" } }), name)).toBeUndefined();
    expect(segmentDelimiter(stored({ segment_delimiter: { body: ";" } }), name)).toBeUndefined();
    const delimiter = segmentDelimiter(config(JSON.parse(`{"segment_delimiter":{${key}:";"}}`)), name);
    expect(segmentText("alpha; beta", delimiter).map((s) => s.text)).toEqual(["alpha", "beta"]);
  });

  it("segmentableFields and searchableText take its text", () => {
    const c = config({ searchable: { allow: [name] } }, true);
    expect(segmentableFields(object, c)).toEqual([{ field: name, text: "alpha; beta" }]);
    expect(searchableText(object, c)).toBe("alpha; beta");
    expect(segmentableFields(without, c)).toEqual([]);
    expect(searchableText(without, c)).toBe("");
  });

  it("objectId reads the id field as an own key", () => {
    expect(objectId(object, name, "input:1")).toBe("alpha; beta");
    expect(objectId(without, name, "input:1")).toBeNull();
    expect(objectId(json(`{${key}:7}`), name, "input:1")).toBe("7");
  });

  it("projectObject returns it as an own key, and nothing for objects without it", () => {
    const projected = projectObject("o1", object, ["id", name]);
    expect(Object.getPrototypeOf(projected)).toBe(Object.prototype);
    expect(Object.keys(projected)).toEqual(["id", name]);
    expect(Object.getOwnPropertyDescriptor(projected, name)?.value).toBe("alpha; beta");
    expect(projectObject("o2", without, ["id", name])).toEqual({ id: "o2" });
    const nested = projectObject("o1", object, ["nested"]).nested as JsonObject;
    expect(Object.getOwnPropertyDescriptor(nested, name)?.value).toBe("deep");
  });

  it("configuration parsing keeps it in allow, deny, types and segment_delimiter", () => {
    const fields = JSON.parse(
      `{"crawlable":{"deny":["secret"]},"searchable":{"allow":[${key},"body"]},"filterable":{"allow":[${key},"price"],"deny":["nested.${name}"]},"types":{${key}:"float","price":"float"},"segment_delimiter":{${key}:";"}}`,
    );
    const parsed = config(fields);
    expect(JSON.parse(JSON.stringify(parsed.fields))).toEqual(fields);
    expect(Object.hasOwn(parsed.fields?.types ?? {}, name)).toBe(true);
    expect(Object.hasOwn(parsed.fields?.segment_delimiter ?? {}, name)).toBe(true);
    expect(namedFilterFields(parsed)).toContainEqual({ path: name, type: "float", declared: true });
  });

  it("configuration parsing checks its entries like any other", () => {
    const issues = (fields: object) => {
      try {
        config(fields);
      } catch (error) {
        return (error as { issues?: { path: string; message: string }[] }).issues ?? [];
      }
      return [];
    };
    expect(issues(JSON.parse(`{"types":{${key}:"money"}}`))).toEqual([{ path: `configuration.fields.types.${name}`, message: expect.stringContaining("unsupported field type") }]);
    expect(issues(JSON.parse(`{"types":{${key}:5}}`))).toEqual([{ path: `configuration.fields.types.${name}`, message: "expected string, received 5" }]);
    expect(issues(JSON.parse(`{"searchable":{"allow":["body"]},"segment_delimiter":{${key}:";"}}`))).toEqual([
      { path: `configuration.fields.segment_delimiter.${name}`, message: expect.stringContaining("not a searchable field") },
    ]);
    expect(issues(JSON.parse(`{"filterable":{"allow":["price"]},"types":{${key}:"int"}}`))).toEqual([
      { path: `configuration.fields.types.${name}`, message: expect.stringContaining("not filterable") },
    ]);
  });
});
