import { describe, expect, it } from "vitest";
import { parseCreateIndexBody } from "../../../src/engine/config.js";
import { embeddableText, MAX_EMBED_CHARS, searchableText } from "../../../src/engine/indexing/extract.js";

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

describe("embeddableText", () => {
  it("keeps short text", () => {
    expect(embeddableText("short")).toBe("short");
  });
  it("cuts long text at a word boundary within the limit", () => {
    const cut = embeddableText("word ".repeat(1000));
    expect(cut.length).toBeLessThanOrEqual(MAX_EMBED_CHARS);
    expect(cut.endsWith("word")).toBe(true);
  });
  it("cuts text without a space in its first half of the limit exactly at the limit", () => {
    expect(embeddableText("x".repeat(5000))).toBe("x".repeat(MAX_EMBED_CHARS));
    const early = `ab ${"y".repeat(4000)}`; // the only space is near the start: cutting there would drop almost everything
    expect(embeddableText(early)).toBe(early.slice(0, MAX_EMBED_CHARS));
  });
});
