import { describe, expect, it } from "vitest";
import { parseCreateIndexBody } from "../../../src/engine/config.js";
import { searchableText } from "../../../src/engine/indexing/extract.js";

const config = (fields?: object) =>
  parseCreateIndexBody({ configuration: { index_type: { name: "text" }, ...(fields ? { fields } : {}) } }).configuration;

describe("searchableText", () => {
  const object = { id: "x1", title: "Title", body: "Body text", tags: ["a", "b", 3], year: 2020, nested: { a: "no" }, empty: " " };
  it("joins every scalar, list and nested field except id, one value per line", () => {
    expect(searchableText(object, config())).toBe("Title\nBody text\na\nb\n3\n2020\nno");
  });
  it("follows searchable.allow and deny, and crawlable", () => {
    expect(searchableText(object, config({ searchable: { allow: ["body", "title"] } }))).toBe("Title\nBody text");
    expect(searchableText(object, config({ searchable: { deny: ["tags", "year"] } }))).toBe("Title\nBody text\nno");
    expect(searchableText(object, config({ searchable: { deny: ["tags", "year", "nested.a"] } }))).toBe("Title\nBody text");
    expect(searchableText(object, config({ searchable: { allow: ["nested.a"] } }))).toBe("no");
    expect(searchableText(object, config({ crawlable: { allow: ["body"] } }))).toBe("Body text");
  });
  it("includes id only when searchable.allow names it", () => {
    expect(searchableText(object, config({ searchable: { allow: ["id", "title"] } }))).toBe("x1\nTitle");
  });
});
