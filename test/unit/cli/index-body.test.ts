import { describe, expect, it } from "vitest";
import { checkNoMix, indexBodyFromFlags } from "../../../src/cli/index-body.js";
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
