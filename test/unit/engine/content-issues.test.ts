import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { checkContent } from "../../../src/engine/content-issues.js";

describe("checkContent", () => {
  const Count = v.pipe(v.number(), v.safeInteger(), v.minValue(1));

  it.each<[string, v.GenericSchema, unknown, string, string]>([
    ["a type", v.object({ a: v.number() }), { a: "SECRET" }, "a", "expected number"],
    ["a literal", v.object({ version: v.literal(1) }), { version: "SECRET" }, "version", "expected 1"],
    ["a whole number", v.object({ n: Count }), { n: 7777777.5 }, "n", "expected a whole number"],
    ["an integer", v.pipe(v.number(), v.integer()), 7777777.5, "", "expected a whole number"],
    ["a finite number", v.pipe(v.number(), v.finite()), Infinity, "", "expected a finite number"],
    ["a minimum", v.object({ n: Count }), { n: -7777777 }, "n", "expected >=1"],
    ["a length", v.pipe(v.string(), v.minLength(32)), "SECRET", "", "expected >=32"],
    ["a check without a message", v.pipe(v.string(), v.check((s) => !s.includes("x"))), "SECRETx", "", "expected a valid value"],
    ["a check with its own message", v.pipe(v.string(), v.check((s) => !s.includes("x"), "an id cannot hold x")), "SECRETx", "", "an id cannot hold x"],
    ["a schema's own message", v.object({ a: v.literal(false, "must be absent or false") }), { a: "SECRET" }, "a", "must be absent or false"],
    ["a picklist", v.picklist(["a", "b"]), "SECRET", "", 'expected ("a" | "b")'],
    ["an element of an array", v.object({ list: v.array(v.string()) }), { list: ["a", 7777777] }, "list.1", "expected string"],
    ["the whole value", v.object({}), "SECRET", "", "expected Object"],
  ])("%s: names the path and what was expected, never the value found", (_, schema, value, path, message) => {
    const result = checkContent(schema, value);
    expect(result).toEqual({ ok: false, issues: [expect.objectContaining({ path, message })] });
    expect(JSON.stringify(result)).not.toMatch(/SECRET|7777777/);
  });

  it("gives the schema's output when the content is right", () => {
    expect(checkContent(v.object({ n: v.optional(Count, 3) }), {})).toEqual({ ok: true, output: { n: 3 } });
  });
});
