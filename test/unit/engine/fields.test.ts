import { describe, expect, it } from "vitest";
import { parseCreateIndexBody, type IndexConfiguration } from "../../../src/engine/config.js";
import { FieldRules, pathSegments, ruleAdmits, valueAt } from "../../../src/engine/fields.js";

function rules(fields: object): FieldRules {
  return new FieldRules(parseCreateIndexBody({ configuration: { index_type: { name: "text" }, fields } }).configuration as IndexConfiguration);
}

const product = {
  id: "p1",
  title: "Trail shoes",
  price: 89.9,
  tags: ["running", "outdoor"],
  maker: { name: "Ridgeway", country: "UK", secret: "s" },
  authors: [{ name: "Ann" }, { name: "Bo" }],
  note: null,
};

describe("ruleAdmits", () => {
  it.each([
    [{ allow: null, deny: [] }, "anything", true],
    [{ allow: null, deny: ["x"] }, "x", false],
    [{ allow: ["x"], deny: ["x"] }, "x", false],
    [{ allow: ["x"], deny: [] }, "y", false],
    [{ allow: ["a"], deny: [] }, "a.b", true],
    [{ allow: ["a.b"], deny: [] }, "a", false],
    [{ allow: null, deny: ["a"] }, "a.b", false],
    [{ allow: ["a"], deny: ["a.b"] }, "a.c", true],
    [{ allow: ["a"], deny: ["a.b"] }, "a.b.c", false],
    [{ allow: ["ab"], deny: [] }, "abc", false],
  ])("%j admits %s: %s", (rule, path, expected) => {
    expect(ruleAdmits(rule, path)).toBe(expected);
  });

  it("splits paths at dots and refuses empty segments", () => {
    expect(pathSegments("a.b")).toEqual(["a", "b"]);
    expect(pathSegments("a..b")).toEqual([]);
    expect(pathSegments("")).toEqual([]);
  });
});

describe("FieldRules", () => {
  it("with no rules everything is crawlable, searchable (but id) and filterable", () => {
    const r = rules({});
    expect(r.admits("searchable", "title")).toBe(true);
    expect(r.admits("searchable", "maker.name")).toBe(true);
    expect(r.admits("searchable", "id")).toBe(false);
    expect(r.admits("filterable", "id")).toBe(true);
  });

  it("a field must be crawlable to be searchable or filterable", () => {
    const r = rules({ crawlable: { deny: ["price"] } });
    expect(r.admits("filterable", "price")).toBe(false);
    expect(r.admits("searchable", "price")).toBe(false);
    expect(r.admits("crawlable", "title")).toBe(true);
  });

  it("id is searchable only when searchable.allow names it", () => {
    expect(rules({ searchable: { allow: ["id", "title"] } }).admits("searchable", "id")).toBe(true);
  });

  it("walks nested objects and lists for searchable scalars, in key order", () => {
    const r = rules({ searchable: { deny: ["maker.secret"] } });
    expect(r.scalars("searchable", product)).toEqual([
      { path: "title", value: "Trail shoes" },
      { path: "price", value: 89.9 },
      { path: "tags", value: "running" },
      { path: "tags", value: "outdoor" },
      { path: "maker.name", value: "Ridgeway" },
      { path: "maker.country", value: "UK" },
      { path: "authors.name", value: "Ann" },
      { path: "authors.name", value: "Bo" },
    ]);
  });

  it("a dotted allow entry reaches only that nested field", () => {
    const r = rules({ searchable: { allow: ["title", "maker.name", "authors.name"] } });
    expect(r.scalars("searchable", product).map((s) => s.value)).toEqual(["Trail shoes", "Ridgeway", "Ann", "Bo"]);
  });

  it("crawled() keeps only crawlable fields, pruning nested ones", () => {
    expect(rules({ crawlable: { deny: ["maker.secret", "tags"] } }).crawled(product)).toEqual({
      id: "p1",
      title: "Trail shoes",
      price: 89.9,
      maker: { name: "Ridgeway", country: "UK" },
      authors: [{ name: "Ann" }, { name: "Bo" }],
      note: null,
    });
    expect(rules({ crawlable: { allow: ["title", "maker.name", "authors.name"] } }).crawled(product)).toEqual({
      title: "Trail shoes",
      maker: { name: "Ridgeway" },
      authors: [{ name: "Ann" }, { name: "Bo" }],
    });
    const all = rules({});
    expect(all.crawled(product)).toBe(product);
  });

  it("valueAt reads nested paths and stops at lists", () => {
    expect(valueAt(product, "maker.country")).toBe("UK");
    expect(valueAt(product, "maker.missing")).toBeUndefined();
    expect(valueAt(product, "authors.name")).toBeUndefined();
    expect(valueAt(product, "title.length")).toBeUndefined();
  });
});
