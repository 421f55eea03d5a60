import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/engine/errors.js";
import { parseSearchParams, projectObject } from "../../../src/engine/search/request.js";
import { validationError } from "../../helpers/errors.js";

describe("parseSearchParams", () => {
  it("defaults: limit 10, offset 0, object fields id, no highlights", () => {
    expect(parseSearchParams({ query: " cats " })).toEqual({
      query: "cats",
      limit: 10,
      offset: 0,
      objectFields: ["id"],
      highlights: false,
      score: false,
      explain: false,
      mode: null,
      semanticRatio: null,
      filter: null,
    });
  });
  it("takes a query of up to 10,000 characters (after trimming) and refuses a longer one, naming its length", () => {
    expect(parseSearchParams({ query: ` ${"a".repeat(10_000)} ` }).query).toHaveLength(10_000);
    expect(() => parseSearchParams({ query: "a".repeat(10_001) })).toThrow(expect.objectContaining({ code: "INVALID_PARAMETER", message: "query is 10,001 characters long; at most 10,000 are allowed", issues: [expect.objectContaining({ path: "query" })] }));
    expect(() => parseSearchParams({ query: "a".repeat(10_001) })).toThrow(ValidationError);
    // characters, not UTF-16 units: 10,000 emoji pass, 10,001 do not
    expect(parseSearchParams({ query: "😀".repeat(10_000) }).query).toHaveLength(20_000);
    expect(() => parseSearchParams({ query: "😀".repeat(10_001) })).toThrow(expect.objectContaining({ message: "query is 10,001 characters long; at most 10,000 are allowed" }));
  });
  it("parses the filter, and refuses a malformed one before any search", () => {
    expect(parseSearchParams({ query: "q", filter: "price:>1" }).filter).toMatchObject({ kind: "compare", op: ">" });
    expect(parseSearchParams({ query: "q", filter: " " }).filter).toBeNull();
    expect(() => parseSearchParams({ query: "q", filter: "price:" })).toThrow(/Invalid filter at column 7/);
  });
  it("* asks for every field; lists are trimmed", () => {
    expect(parseSearchParams({ query: "q", objectFields: "*" }).objectFields).toBeNull();
    expect(parseSearchParams({ query: "q", objectFields: " title, body ,," }).objectFields).toEqual(["title", "body"]);
    expect(parseSearchParams({ query: "q", objectFields: "title,*" }).objectFields).toBeNull();
  });
  it("takes a semantic ratio from 0 to 1: 0 is the lexical mode, 1 the vector mode, between them hybrid", () => {
    expect(parseSearchParams({ query: "q", semanticRatio: 0 })).toMatchObject({ semanticRatio: 0, mode: "lexical" });
    expect(parseSearchParams({ query: "q", semanticRatio: 1 })).toMatchObject({ semanticRatio: 1, mode: "vector" });
    expect(parseSearchParams({ query: "q", semanticRatio: 0.7 })).toMatchObject({ semanticRatio: 0.7, mode: null });
    expect(parseSearchParams({ query: "q" })).toMatchObject({ semanticRatio: null, mode: null });
  });
  it.each([-0.1, 1.01, Number.NaN, Infinity])("refuses a semantic ratio of %s, naming the range", (ratio) => {
    const error = validationError(() => parseSearchParams({ query: "q", semanticRatio: ratio }));
    expect([error.issues?.[0]?.path, error.message]).toEqual(["semantic_ratio", `semantic_ratio must be from 0 to 1, got ${ratio}`]);
  });
  it("refuses a semantic ratio with a mode", () => {
    expect(validationError(() => parseSearchParams({ query: "q", semanticRatio: 0.5, mode: "hybrid" })).message).toBe("Give semantic_ratio or mode, not both");
  });
  it("accepts highlights", () => {
    expect(parseSearchParams({ query: "q", resultFields: "highlights" }).highlights).toBe(true);
  });
  it.each([
    [{ query: "" }, "query"],
    [{ query: "q", limit: 0 }, "limit"],
    [{ query: "q", limit: 1001 }, "limit"],
    [{ query: "q", limit: 2.5 }, "limit"],
    [{ query: "q", offset: -1 }, "offset"],
    [{ query: "q", offset: 10_000 }, "offset"],
    [{ query: "q", resultFields: "scores" }, "result_fields"],
    [{ query: "q", mode: "fuzzy" }, "mode"],
    [{ query: "q", semanticRatio: 1.5 }, "semantic_ratio"],
  ])("rejects %j", (params, path) => {
    try {
      parseSearchParams(params);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues?.[0]?.path).toBe(path);
    }
  });
});

describe("projectObject", () => {
  const object = { id: "a", title: "T", body: "B" };
  it("returns the whole object for *", () => {
    expect(projectObject("a", object, null)).toBe(object);
  });
  it("picks the listed fields that exist", () => {
    expect(projectObject("a", object, ["title", "missing"])).toEqual({ title: "T" });
  });
  it("gives the object id for `id` even when the object has no id field", () => {
    expect(projectObject("gen-1", { title: "T" }, ["id"])).toEqual({ id: "gen-1" });
  });
  it("gives the object id for an `id` of null, which an add reads as no id", () => {
    expect(projectObject("gen-2", { id: null, title: "T" }, ["id", "title"])).toEqual({ id: "gen-2", title: "T" });
  });
  it("gives an object's own id field as it is stored", () => {
    expect(projectObject("5", { id: 5, title: "T" }, ["id"])).toEqual({ id: 5 });
  });
});
