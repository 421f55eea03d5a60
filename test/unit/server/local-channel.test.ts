import { describe, expect, it } from "vitest";
import { searchRequest } from "../../../src/server/local-channel.js";

const line = (value: unknown) => JSON.stringify(value);

describe("a local search request", () => {
  it("takes only a search's parameters, each of its type", () => {
    const request = searchRequest(line({ v: 1, version: "1.2.3", search: { index: "docs", params: { query: "q", limit: 5, snippets: false, filter: "a:1", constructor: "x", toString: 1, hasOwnProperty: 2 } } }), "1.2.3");
    expect(request).toEqual({ index: "docs", params: { query: "q", limit: 5, snippets: false, filter: "a:1" } });
    expect(Object.getPrototypeOf(request.params)).toBe(Object.prototype);
  });

  it.each([
    ["not json", "BAD_REQUEST"],
    [line({ v: 1, version: "1.2.3" }), "BAD_REQUEST"],
    [line({ v: 1, version: "1.2.3", search: { index: "docs", params: { limit: 5 } } }), "BAD_REQUEST"],
    [line({ v: 1, version: "1.2.3", search: { index: "docs", params: { query: "q", limit: "5" } } }), "BAD_REQUEST"],
    [line({ v: 1, version: "1.2.3", search: { index: "docs", params: { query: ["q"] } } }), "BAD_REQUEST"],
    [line({ v: 1, version: "1.2.3", search: { index: 7, params: { query: "q" } } }), "BAD_REQUEST"],
    [line({ v: 1, version: "1.2.4", search: { index: "docs", params: { query: "q" } } }), "LOCAL_VERSION"],
    [line({ v: 2, version: "1.2.3", search: { index: "docs", params: { query: "q" } } }), "LOCAL_VERSION"],
    ["null", "LOCAL_VERSION"],
  ])("refuses %s (%s)", (text, code) => {
    expect(() => searchRequest(text, "1.2.3")).toThrow(expect.objectContaining({ code }));
  });
});
