import { describe, expect, it } from "vitest";
import { localCall } from "../../../src/server/local-channel.js";

const line = (value: unknown) => JSON.stringify(value);
const request = (op: unknown, args: unknown, version = "1.2.3", v = 1) => line({ v, version, op, args });

describe("a local request", () => {
  it("takes only a search's parameters, each of its type", () => {
    const call = localCall(request("search", ["docs", { query: "q", limit: 5, snippets: false, filter: "a:1", constructor: "x", toString: 1, hasOwnProperty: 2 }]), "1.2.3");
    expect(call).toEqual({ op: "search", args: ["docs", { query: "q", limit: 5, snippets: false, filter: "a:1" }] });
    expect(Object.getPrototypeOf(call.args[1])).toBe(Object.prototype);
  });

  it("takes the reading operations with their arguments", () => {
    expect(localCall(request("listIndexes", []), "1.2.3")).toEqual({ op: "listIndexes", args: [] });
    expect(localCall(request("getIndex", ["docs"]), "1.2.3")).toEqual({ op: "getIndex", args: ["docs"] });
    expect(localCall(request("getObject", ["constructor"]), "1.2.3")).toEqual({ op: "getObject", args: ["constructor"] });
    expect(localCall(request("listObjects", [10, 5]), "1.2.3")).toEqual({ op: "listObjects", args: [10, 5] });
  });

  it.each([
    ["not json", "BAD_REQUEST"],
    [line({ v: 1, version: "1.2.3" }), "BAD_REQUEST"],
    [request("deleteIndex", ["docs"]), "BAD_REQUEST"],
    [request("addObjects", [[]]), "BAD_REQUEST"],
    [request("constructor", []), "BAD_REQUEST"],
    [request("__proto__", []), "BAD_REQUEST"],
    [request("toString", []), "BAD_REQUEST"],
    [request("search", ["docs", { limit: 5 }]), "BAD_REQUEST"],
    [request("search", ["docs", { query: "q", limit: "5" }]), "BAD_REQUEST"],
    [request("search", ["docs", { query: ["q"] }]), "BAD_REQUEST"],
    [request("search", ["docs", null]), "BAD_REQUEST"],
    [request("search", ["docs", ["q"]]), "BAD_REQUEST"],
    [request("search", [7, { query: "q" }]), "BAD_REQUEST"],
    [request("search", ["docs"]), "BAD_REQUEST"],
    [request("getIndex", ["docs", "extra"]), "BAD_REQUEST"],
    [request("getObject", [{}]), "BAD_REQUEST"],
    [request("listObjects", ["0", "10"]), "BAD_REQUEST"],
    [request("listIndexes", {}), "BAD_REQUEST"],
    [request("search", ["docs", { query: "q" }], "1.2.4"), "LOCAL_VERSION"],
    [request("search", ["docs", { query: "q" }], "1.2.3", 2), "LOCAL_VERSION"],
    ["null", "LOCAL_VERSION"],
  ])("refuses %s (%s)", (text, code) => {
    expect(() => localCall(text, "1.2.3")).toThrow(expect.objectContaining({ code }));
  });
});
