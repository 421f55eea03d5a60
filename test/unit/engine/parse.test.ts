import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/engine/errors.js";
import { decodeUtf8 } from "../../../src/engine/objects/input.js";
import { checkValue, firstInvalidUtf8, lineOf, MAX_DEPTH, objectId, parseJsonText, parseObjectsText } from "../../../src/engine/objects/parse.js";

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

  it.each([
    { id: "" },
    { id: true },
    { id: { a: 1 } },
    { id: "\ud800" }, // unpaired surrogates would both be stored as U+FFFD: one id
    { id: "a\udc00b" },
    { id: 12345678901234567890 }, // beyond 2^53: 12345678901234567891 would parse to the same number
    { id: 2 ** 53 },
    { id: 1.5 },
    { id: "x".repeat(2049) },
    { id: "a\u0000b" },
    { id: "\ufeffx" }, // storage drops a leading byte order mark: it would come back as "x"
  ])("rejects %j naming the field and place", (object) => {
    expect(errorOf(() => objectId(object, "id", "f.jsonl:7")).message).toMatch(/^f\.jsonl:7: field "id"/);
  });

  it("accepts the largest safe integers, surrogate pairs, and ids at the length limit", () => {
    expect(objectId({ id: 2 ** 53 - 1 }, "id", "f")).toBe("9007199254740991");
    expect(objectId({ id: -(2 ** 53 - 1) }, "id", "f")).toBe("-9007199254740991");
    expect(objectId({ id: "😀" }, "id", "f")).toBe("😀");
    expect(objectId({ id: "x".repeat(2048) }, "id", "f")).toHaveLength(2048);
  });

  it("numbers that JSON parsing would merge are refused, not merged", () => {
    const parsed = parseObjectsText('{"id":12345678901234567890}\n{"id":12345678901234567891}', "n.jsonl");
    expect(errorOf(() => objectId(parsed[0]!.object, "id", parsed[0]!.where)).message).toMatch(/^n\.jsonl:1: .*write the id as a string/);
  });

  it("reads only the object's own field: an id field named after an Object.prototype member is absent when not given", () => {
    expect(objectId({ id: "a" }, "constructor", "f")).toBeNull();
    expect(objectId({ constructor: "c" }, "constructor", "f")).toBe("c");
  });
});

describe("checkValue", () => {
  const nested = (depth: number): unknown => (depth === 0 ? 1 : { a: nested(depth - 1) });
  it(`accepts objects nested ${MAX_DEPTH} levels deep and refuses one more, naming the path`, () => {
    expect(() => checkValue(nested(MAX_DEPTH), "f:1")).not.toThrow();
    expect(errorOf(() => checkValue(nested(MAX_DEPTH + 1), "f:1")).message).toMatch(new RegExp(`^f:1: a(\\.a)+: objects and lists nest deeper than ${MAX_DEPTH} levels`));
  });

  it("refuses deep nesting without overflowing the stack (100,000 levels)", () => {
    const text = `{"x":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    expect(errorOf(() => parseObjectsText(text, "deep.json")).message).toMatch(/^deep\.json:1: x(\[0\])+: .*nest deeper/);
  });

  it.each(["1e400", "-1e400"])("refuses %s, which a double cannot hold (JSON.parse reads it as Infinity)", (number) => {
    expect(errorOf(() => parseObjectsText(`{"id":"a"}\n{"id":"b","m":{"v":[1,${number}]}}`, "f.jsonl")).message).toBe(
      "f.jsonl:2: m.v[1]: the number is out of range (beyond ±1.8e308)",
    );
  });
});

describe("UTF-8", () => {
  it.each([
    [[0x61, 0x62], -1],
    [[0xe2, 0x82, 0xac], -1], // €
    [[0xf0, 0x9f, 0x98, 0x80], -1], // 😀
    [[0x61, 0xff], 1],
    [[0xc0, 0x80], 0], // overlong NUL
    [[0xe0, 0x80, 0x80], 0], // overlong
    [[0xed, 0xa0, 0x80], 0], // a surrogate
    [[0xf4, 0x90, 0x80, 0x80], 0], // beyond U+10FFFF
    [[0x61, 0xe2, 0x82], 1], // truncated
    [[0x80], 0], // a lone continuation byte
  ])("%j → first invalid byte %i", (bytes, at) => {
    expect(firstInvalidUtf8(Uint8Array.from(bytes))).toBe(at);
  });

  it("decodeUtf8 names the line and byte of the first malformed byte", () => {
    const bytes = Buffer.concat([Buffer.from('{"a":1}\n{"b":"'), Buffer.from([0xff]), Buffer.from('"}\n')]);
    expect(errorOf(() => decodeUtf8(bytes, "x.json", 1)).message).toMatch(/^x\.json:2: invalid UTF-8: byte 0xff at byte 7 of the line/);
    expect(decodeUtf8(Buffer.from("é"), "x")).toBe("é");
  });
});

describe("JSON nested deeper than the stack", () => {
  it("objects add input: names the line where it stops being JSON, however deep the nesting", () => {
    const text = "[\n".repeat(200_000) + "x";
    expect(errorOf(() => parseObjectsText(text, "deep.json")).message).toMatch(/^deep\.json:200001: invalid JSON/);
  });

  it("a JSON document (index create --config): likewise", () => {
    const text = '{"configuration":\n' + "[\n".repeat(200_000);
    expect(errorOf(() => parseJsonText(text, "config.json")).message).toMatch(/^config\.json:200002: invalid JSON/);
  });
});

describe("lineOf", () => {
  it("counts newlines before an offset", () => {
    expect(lineOf("a\nb\nc", 0)).toBe(1);
    expect(lineOf("a\nb\nc", 4)).toBe(3);
  });
});
