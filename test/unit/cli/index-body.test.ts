import { describe, expect, it } from "vitest";
import { checkNoMix, indexBodyFromFlags } from "../../../src/cli/index-body.js";
import { keyValueArg } from "../../../src/cli/options.js";
import { parseCreateIndexBody } from "../../../src/engine/config.js";
import { UsageError } from "../../../src/engine/errors.js";

describe("indexBodyFromFlags", () => {
  it("defaults to a text index", () => {
    expect(indexBodyFromFlags({})).toEqual({ configuration: { index_type: { name: "text" } } });
  });
  it("builds the spec's body from every flag", () => {
    expect(
      indexBodyFromFlags({
        type: "text",
        highlights: true,
        neuralOnly: true,
        model: "use",
        crawlable: ["a", "b"],
        searchableDeny: ["b"],
        filterable: ["price"],
        fieldType: { price: "float" },
        segmentDelimiter: { body: "\\n\\n" },
      }),
    ).toEqual({
      configuration: {
        index_type: { name: "text", highlights: { text: true }, neural_only: true },
        fields: {
          crawlable: { allow: ["a", "b"] },
          searchable: { deny: ["b"] },
          filterable: { allow: ["price"] },
          types: { price: "float" },
          segment_delimiter: { body: "\\n\\n" },
        },
        model: "use",
      },
    });
  });
  it("refuses --config mixed with body flags", () => {
    expect(() => checkNoMix({ highlights: true }, "cfg.json")).toThrow(UsageError);
    expect(() => checkNoMix({}, "cfg.json")).not.toThrow();
  });
});

describe.each(["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf", "prototype", "__defineGetter__"])("flags naming the field %s", (name) => {
  it("keyValueArg keeps it as an own key, beside earlier ones", () => {
    const once = keyValueArg(`${name}=float`);
    expect(Object.getPrototypeOf(once)).toBe(Object.prototype);
    expect(Object.keys(once)).toEqual([name]);
    expect(Object.getOwnPropertyDescriptor(once, name)?.value).toBe("float");
    const twice = keyValueArg("price=int", keyValueArg(`${name}=a=b`));
    expect(Object.entries(twice)).toEqual([
      [name, "a=b"],
      ["price", "int"],
    ]);
  });
  it("the body carries it into types and segment_delimiter, and the engine accepts it", () => {
    const body = indexBodyFromFlags({ highlights: true, searchable: [name, "body"], fieldType: keyValueArg(`${name}=float`), segmentDelimiter: keyValueArg(`${name}=;`) });
    const sent = JSON.stringify(body);
    expect(JSON.parse(sent).configuration.fields).toEqual(JSON.parse(`{"searchable":{"allow":[${JSON.stringify(name)},"body"]},"types":{${JSON.stringify(name)}:"float"},"segment_delimiter":{${JSON.stringify(name)}:";"}}`));
    expect(JSON.stringify(parseCreateIndexBody(JSON.parse(sent)))).toBe(sent);
  });
});

describe("model flags", () => {
  it("passes an empty --model on, so it is refused instead of meaning the default", () => {
    const body = indexBodyFromFlags({ model: "", modelDtype: "q8" });
    expect(body.configuration).toMatchObject({ model: "", model_dtype: "q8" });
    expect(() => parseCreateIndexBody(body)).toThrow(/model/);
  });
});
