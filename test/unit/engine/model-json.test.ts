import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EnvironmentError } from "../../../src/engine/errors.js";
import { firstNotJson, jsonErrorOffset, notJsonError, readModelJson } from "../../../src/engine/embedding/model-json.js";
import { tempDir } from "../../helpers/temp.js";

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe("jsonErrorOffset", () => {
  it.each<[string, number | null]>([
    ['{"a": [1, 2.5e-3, true, null, "x\\u00e9\\n"]}', null],
    ["  []  ", null],
    ["", 0],
    ["SECRET{", 0],
    ['{"a": 1,}', 8],
    ['{"a" 1}', 5],
    ["[1, 2", 5],
    ['{"a": "unterminated', 19],
    ["[01]", 2],
    ["[1.]", 2],
    ['["a\\x"]', 3],
    ['["tab\there"]', 5],
    ["{} {}", 3],
    ["[".repeat(100_000) + "]".repeat(100_000), null],
  ])("%j → %j", (text, offset) => {
    expect(jsonErrorOffset(text)).toBe(offset);
    expect(offset === null).toBe(parses(text));
  });

  it("property: finds a fault exactly when JSON.parse fails, on JSON and on JSON with one character changed", () => {
    const json = fc.json({ maxDepth: 4 });
    const mutated = fc.tuple(json, fc.nat(), fc.constantFrom("", "{", "}", "[", "]", ",", ":", '"', "\\", "1", "e", "-", " ", ".", "t", "\n")).map(([text, at, c]) => {
      const i = at % (text.length + 1);
      return text.slice(0, i) + c + text.slice(i + 1);
    });
    fc.assert(
      fc.property(fc.oneof(json, mutated, fc.string()), (text) => {
        expect(jsonErrorOffset(text) === null).toBe(parses(text));
      }),
      { numRuns: 3000 },
    );
  });
});

describe("errors about model JSON files", () => {
  const dir = tempDir();

  it.each<[string, string]>([
    ["SECRET-CONTENT{ not json", "line 1, column 1"],
    ['{\n  "hidden_size": 32,\n  "model_type": SECRET-CONTENT\n}', "line 3, column 17"],
    ['{"vocab": {"SECRET-CONTENT": 1', "it ends early, at line 1"],
  ])("name the file and the place of the fault, never its text: %j", (text, where) => {
    const file = path.join(dir, "config.json");
    writeFileSync(file, text);
    const error = notJsonError(file, text);
    expect(error).toBeInstanceOf(EnvironmentError);
    expect(error.code).toBe("MODEL_UNREADABLE");
    expect(error.message).toBe(`The model file ${file} is not valid JSON (${where})`);
    expect(JSON.stringify(error.toJSON())).not.toContain("SECRET");
    expect(() => readModelJson(file)).toThrow(error.message);
    expect(firstNotJson([path.join(dir, "absent.json"), file])?.message).toBe(error.message);
  });

  it("readModelJson: an object, undefined for another value or an absent file", () => {
    const sub = path.join(dir, "sub");
    mkdirSync(sub);
    writeFileSync(path.join(sub, "a.json"), '{"x": 1}');
    writeFileSync(path.join(sub, "b.json"), "[1]");
    expect(readModelJson(path.join(sub, "a.json"))).toEqual({ x: 1 });
    expect(readModelJson(path.join(sub, "b.json"))).toBeUndefined();
    expect(readModelJson(path.join(sub, "none.json"))).toBeUndefined();
    expect(firstNotJson([path.join(sub, "a.json"), path.join(sub, "b.json")])).toBeNull();
  });
});
