import { describe, expect, it } from "vitest";
import type { IndexConfiguration } from "../../../src/engine/config.js";
import { commonFields, editDistance, fieldPaths, missingFields, missingFieldsMessage, namedFields } from "../../../src/engine/field-presence.js";

const config = (fields: IndexConfiguration["fields"]): IndexConfiguration => ({ index_type: { name: "text" }, fields });

describe("fieldPaths", () => {
  it("lists every path through objects and lists, at any depth, counting objects once each", () => {
    const found = new Map<string, number>();
    fieldPaths({ id: "1", tags: [{ name: "a" }, { name: "b" }], meta: { a: { b: { c: { d: { e: "deep" } } } } } }, found);
    fieldPaths({ id: "2", title: "t" }, found);
    expect(found.get("id")).toBe(2);
    expect(found.get("tags.name")).toBe(1);
    expect(found.has("meta.a.b.c.d.e")).toBe(true);
    expect(found.get("title")).toBe(1);
  });

  it("keeps Object.prototype names as ordinary keys", () => {
    const found = fieldPaths(JSON.parse('{"__proto__": {"x": 1}, "constructor": 2}'));
    expect([...found.keys()].sort()).toEqual(["__proto__", "__proto__.x", "constructor"]);
  });
});

describe("missing fields", () => {
  const found = fieldPaths({ id: "1", title: "t", body: "b", meta: { author: "x" } });

  it("names the configuration's fields no object has, with the closest existing name", () => {
    expect(missingFields(config({ searchable: { allow: ["titel", "body"] }, types: { "meta.autor": "string" } }), found)).toEqual([
      { name: "titel", suggestion: "title" },
      { name: "meta.autor", suggestion: "meta.author" },
    ]);
  });

  it("suggests nothing when no name is close (or the name is too short to judge)", () => {
    expect(missingFields(config({ searchable: { allow: ["price", "ab"] } }), found)).toEqual([{ name: "price" }, { name: "ab" }]);
  });

  it("ignores id, which every object has", () => {
    expect(namedFields(config({ searchable: { allow: ["id", "title"] } }))).toEqual(["title"]);
  });

  it("words the warning with what was looked at, or says nothing", () => {
    expect(missingFieldsMessage(config({ searchable: { allow: ["title"] } }), found, 1, 1)).toBeNull();
    expect(missingFieldsMessage(config({ searchable: { allow: ["titel"] } }), new Map(), 0, 0)).toBeNull();
    expect(missingFieldsMessage(config({ searchable: { allow: ["titel"] } }), found, 1000, 5000)).toBe(
      'None of the first 1,000 of 5,000 stored objects has the field "titel" (did you mean "title"?). Fields they have: body, id, meta, title, meta.author.',
    );
  });

  it("lists shallow and common fields first", () => {
    const many = new Map([["a.b", 9], ["z", 1], ["y", 5]]);
    expect(commonFields(many)).toBe("y, z, a.b");
  });
});

describe("editDistance", () => {
  it.each([
    ["title", "title", 0],
    ["titel", "title", 1], // an adjacent swap counts once
    ["body", "bodies", 3],
    ["price", "title", 4],
  ])("%s → %s: %i", (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
  });
});

describe("listFieldsMessage", () => {
  const config = (allow: string[]) => ({ index_type: { name: "text" }, fields: { filterable: { allow } } }) as never;

  const typed = (types: Record<string, string>) => ({ index_type: { name: "text" }, fields: { types } }) as never;

  it("names filterable fields that hold lists of objects or lists, and in how many sampled objects", async () => {
    const { listFieldsMessage } = await import("../../../src/engine/field-presence.js");
    const objects = [{ tags: ["sale", "new"], maker: { names: [[1]] } }, { tags: "sale" }, { tags: [null, { a: 1 }] }];
    expect(listFieldsMessage(config(["tags", "maker.names", "price"]), objects)).toBe(
      'Filterable fields "tags" (in 1 of 3 sampled objects), "maker.names" (in 1 of 3 sampled objects) hold lists of objects or lists: a filter matches the elements of lists of text, numbers and booleans, so it never matches such objects (nor does a path into the elements). Store the values to filter on as a list of text or numbers, or leave the fields out of filterable.',
    );
    expect(listFieldsMessage(typed({ tags: "string" }), objects) ?? "").toContain('"tags" (in 1 of 3 sampled objects; its declared type puts those objects in the ERROR state)');
    expect(listFieldsMessage(config(["price"]), objects)).toBeNull();
    expect(listFieldsMessage(config(["tags"]), [])).toBeNull();
  });

  it("says nothing of lists of text, numbers and booleans, which filters match by element", async () => {
    const { listFieldsMessage } = await import("../../../src/engine/field-presence.js");
    expect(listFieldsMessage(config(["tags", "sizes", "flags"]), [{ tags: ["sale", null], sizes: [38, 39.5], flags: [true] }, { tags: [] }])).toBeNull();
  });
});
