import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/engine/errors.js";
import { lineOf, objectId, parseObjectsText } from "../../../src/engine/objects/parse.js";

function errorOf(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error("expected a ValidationError");
}

describe("parseObjectsText", () => {
  it("reads a JSON array, with the line of each element", () => {
    const parsed = parseObjectsText('[\n  {"id": "a"},\n  {"id": "b", "x": [1, {"y": 2}]}\n]', "in.json");
    expect(parsed.map((p) => p.object.id)).toEqual(["a", "b"]);
    expect(parsed.map((p) => p.where)).toEqual(["in.json:2", "in.json:3"]);
  });

  it("reads a single (pretty-printed) object", () => {
    const parsed = parseObjectsText('{\n  "id": "a",\n  "title": "T"\n}\n', "one.json");
    expect(parsed).toEqual([{ object: { id: "a", title: "T" }, where: "one.json:1" }]);
  });

  it("reads JSON Lines, skipping blank lines and a BOM", () => {
    const parsed = parseObjectsText('\uFEFF{"id":"a"}\n\n{"id":"b"}\r\n', "x.jsonl");
    expect(parsed.map((p) => [p.object.id, p.where])).toEqual([
      ["a", "x.jsonl:1"],
      ["b", "x.jsonl:3"],
    ]);
  });

  it("names the file and line of a malformed JSON Lines line", () => {
    const error = errorOf(() => parseObjectsText('{"id":"a"}\n{"id":"b"}\n{"id": oops}\n', "data.jsonl"));
    expect(error.message).toMatch(/^data\.jsonl:3: invalid JSON/);
    expect(error.code).toBe("INVALID_INPUT");
  });

  it("names the line of a syntax error in an array", () => {
    expect(errorOf(() => parseObjectsText('[\n{"id":"a"},\n{"id":}\n]', "arr.json")).message).toMatch(/^arr\.json:3: /);
  });

  it.each([
    ["[1, 2]", "array element 0 is not a JSON object"],
    ['{"a":1}\n[1]', "each line must be a JSON object"],
    ['"text"', "expected a JSON object"],
  ])("rejects %j", (text, message) => {
    expect(errorOf(() => parseObjectsText(text, "f")).message).toContain(message);
  });

  it("returns nothing for empty input", () => {
    expect(parseObjectsText("  \n ", "f")).toEqual([]);
  });
});

describe("objectId", () => {
  it.each([
    [{ id: "a" }, "a"],
    [{ id: 42 }, "42"],
    [{ other: 1 }, null],
    [{ id: null }, null],
  ])("%j → %j", (object, id) => {
    expect(objectId(object, "id", "f:1")).toBe(id);
  });

  it("uses the chosen id field", () => {
    expect(objectId({ sku: "X-1", id: "ignored" }, "sku", "f:1")).toBe("X-1");
  });

  it.each([{ id: "" }, { id: true }, { id: { a: 1 } }])("rejects %j naming the field and place", (object) => {
    expect(errorOf(() => objectId(object, "id", "f.jsonl:7")).message).toMatch(/^f\.jsonl:7: field "id"/);
  });
});

describe("lineOf", () => {
  it("counts newlines before an offset", () => {
    expect(lineOf("a\nb\nc", 0)).toBe(1);
    expect(lineOf("a\nb\nc", 4)).toBe(3);
  });
});

describe("jsonErrorOffset", async () => {
  const { jsonErrorOffset } = await import("../../../src/engine/objects/json-error.js");
  it.each([
    ['{"a": [1, 2.5e3, true, null, "x\\n\\u00e9"]}', -1],
    ["[]", -1],
    ['{"a": }', 6],
    ["[1, 2", 5],
    ['{"a" 1}', 5],
    ['"\\q"', 2],
    ["[01]", 2],
    ["{} x", 3],
  ])("%j → %i", (text, offset) => {
    expect(jsonErrorOffset(text)).toBe(offset);
  });

  it("agrees with JSON.parse on validity", () => {
    for (const text of ["{", "[1,]", '{"a":1,}', "nul", "-", "1.", '"abc', "[true false]", '{"k":"v"}']) {
      let valid = true;
      try {
        JSON.parse(text);
      } catch {
        valid = false;
      }
      expect(jsonErrorOffset(text) === -1).toBe(valid);
    }
  });
});
