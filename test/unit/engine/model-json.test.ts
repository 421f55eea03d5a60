import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EnvironmentError } from "../../../src/engine/errors.js";
import { firstNotJson, notJsonError, readModelJson } from "../../../src/engine/embedding/model-json.js";
import { tempDir } from "../../helpers/temp.js";

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

  it("a config file nested deeper than the stack: the line and column of its fault", () => {
    const file = path.join(dir, "deep.json");
    writeFileSync(file, '{"architectures":\n' + "[".repeat(200_000) + "SECRET");
    expect(() => readModelJson(file)).toThrow(`The model file ${file} is not valid JSON (line 2, column 200001)`);
    expect(firstNotJson([file])?.message).toBe(`The model file ${file} is not valid JSON (line 2, column 200001)`);
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
