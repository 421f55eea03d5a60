import { describe, expect, it } from "vitest";
import { fieldRule, isSearchableField, parseCreateIndexBody, ruleAdmits } from "../../../src/engine/config.js";
import { NotFoundError, ValidationError } from "../../../src/engine/errors.js";

const text = { configuration: { index_type: { name: "text" } } };

function issuesOf(body: unknown) {
  try {
    parseCreateIndexBody(body);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).issues ?? [];
  }
  throw new Error("expected a ValidationError");
}

describe("parseCreateIndexBody", () => {
  it("accepts the spec's full example shape", () => {
    const body = {
      configuration: {
        index_type: { name: "text", highlights: { text: true } },
        fields: {
          crawlable: { allow: ["title", "body", "price"], deny: ["secret"] },
          searchable: { allow: ["title", "body"] },
          filterable: { allow: ["price"] },
          types: { price: "float" },
          segment_delimiter: { body: "\\n\\n" },
        },
      },
    };
    expect(parseCreateIndexBody(body)).toEqual(body);
  });

  it.each(["video", "audio", ""])("rejects index type %j as not found (the service's 404)", (name) => {
    expect(() => parseCreateIndexBody({ configuration: { index_type: { name } } })).toThrow(NotFoundError);
  });

  it.each([
    [{ configuration: { index_type: { name: "text" }, colour: 1 } }, "configuration", 'unknown key "colour"'],
    [{ configuration: { index_type: { name: "text", highlights: { text: "yes" } } } }, "configuration.index_type.highlights.text", "expected boolean"],
    [{ configuration: {} }, "configuration.index_type", "required"],
    [{}, "configuration", "required"],
    ["just text", "(body)", "expected Object"],
    [{ configuration: { index_type: { name: 7 } } }, "configuration.index_type.name", "expected string"],
    [{ configuration: { ...text.configuration, fields: { searchable: { allow: "title" } } } }, "configuration.fields.searchable.allow", "expected Array"],
    [{ configuration: { ...text.configuration, fields: { searchable: { allow: [""] } } } }, "configuration.fields.searchable.allow.0", "empty"],
    [{ configuration: { ...text.configuration, fields: { types: { price: "money" } } } }, "configuration.fields.types.price", 'unsupported field type "money"'],
    [{ configuration: { ...text.configuration, fields: { segment_delimiter: { body: "(" } } } }, "configuration.fields.segment_delimiter.body", "invalid regular expression"],
    [{ configuration: { ...text.configuration, fields: { segment_delimiter: { body: "x*" } } } }, "configuration.fields.segment_delimiter.body", "matches the empty string"],
  ])("reports %j at its path", (body, path, message) => {
    const issues = issuesOf(body);
    expect(issues[0]?.path).toBe(path);
    expect(issues[0]?.message).toContain(message);
  });

  it("lists every issue, not just the first", () => {
    const issues = issuesOf({
      configuration: { ...text.configuration, fields: { types: { a: "x", b: "y" } } },
    });
    expect(issues.map((issue) => issue.path)).toEqual(["configuration.fields.types.a", "configuration.fields.types.b"]);
  });
});

describe("field rules", () => {
  it("an omitted allow admits every field; deny always wins", () => {
    expect(ruleAdmits({ allow: null, deny: [] }, "anything")).toBe(true);
    expect(ruleAdmits({ allow: null, deny: ["x"] }, "x")).toBe(false);
    expect(ruleAdmits({ allow: ["x"], deny: ["x"] }, "x")).toBe(false);
    expect(ruleAdmits({ allow: ["x"], deny: [] }, "y")).toBe(false);
  });

  it("a searchable field must also be crawlable", () => {
    const config = parseCreateIndexBody({
      configuration: { ...text.configuration, fields: { crawlable: { deny: ["body"] }, searchable: { allow: ["title", "body"] } } },
    }).configuration;
    expect(isSearchableField(config, "title")).toBe(true);
    expect(isSearchableField(config, "body")).toBe(false);
    expect(fieldRule(config, "filterable")).toEqual({ allow: null, deny: [] });
  });
});
