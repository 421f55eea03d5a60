import { describe, expect, it } from "vitest";
import { parseCreateIndexBody } from "../../../src/engine/config.js";
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

  it.each([
    ["a(?=b)", "invalid or unsupported Perl syntax: `(?=`"],
    ["(?<!x)a", "no lookarounds or backreferences"],
    ["(a)\\1", "invalid escape sequence: `\\1`"],
    ["\\u00e9", "delimiters use RE2 syntax"],
    ["a{1000}{1000}", "invalid nested repetition operator"],
    ["(?:a{1000}){1000}", "invalid repeat count"],
    ["[^z]{0,1000}z", "too complex: it compiles to"],
    ["x".repeat(1001), "1001 characters long; at most 1000"],
  ])("refuses segment delimiter %j, which RE2 cannot run or which is too large, saying why", (source, why) => {
    const issues = issuesOf({ configuration: { ...text.configuration, fields: { segment_delimiter: { body: source } } } });
    expect(issues).toHaveLength(1);
    expect(issues[0]?.path).toBe("configuration.fields.segment_delimiter.body");
    expect(issues[0]?.message).toMatch(/^invalid regular expression \/.{1,61}\/: /);
    expect(issues[0]?.message).toContain(why);
  });

  it.each(["(a+)+b", "\\n\\s*\\n", "(?i)\\bchapter\\s+\\d+", "😀|\\x{1F4A9}", "\\p{Lu}{2,}:"])("accepts segment delimiter %j (RE2 syntax; linear time)", (source) => {
    const body = { configuration: { ...text.configuration, fields: { segment_delimiter: { body: source } } } };
    expect(parseCreateIndexBody(body)).toEqual(body);
  });

  it("lists every issue, not just the first", () => {
    const issues = issuesOf({
      configuration: { ...text.configuration, fields: { types: { a: "x", b: "y" } } },
    });
    expect(issues.map((issue) => issue.path)).toEqual(["configuration.fields.types.a", "configuration.fields.types.b"]);
  });
});

describe("tokenizer (extension)", () => {
  const body = (tokenizer: unknown, index_type: object = { name: "text" }) => ({ configuration: { index_type, tokenizer } });
  const issue = (given: unknown) => {
    try {
      parseCreateIndexBody(given);
    } catch (error) {
      return (error as ValidationError).issues?.[0];
    }
    throw new Error("accepted");
  };
  it("takes the options it names, each optional", () => {
    expect(parseCreateIndexBody(body({ stem: false, language: "French" })).configuration.tokenizer).toEqual({ stem: false, language: "French" });
    expect(parseCreateIndexBody(body({})).configuration.tokenizer).toEqual({});
  });
  it("refuses an unknown option, naming it and the options there are", () => {
    expect(issue(body({ stemming: true }))).toEqual({ path: "configuration.tokenizer", message: 'unknown tokenizer option "stemming"; the options are stem, stop_words, ascii_folding, lowercase, language' });
  });
  it("refuses a language LanceDB does not know (it would abort the process), listing those it does", () => {
    const found = issue(body({ language: "Klingon" }));
    expect(found?.path).toBe("configuration.tokenizer.language");
    expect(found?.message).toMatch(/^expected one of Arabic, Danish, .*Turkish \(in any case\), got "Klingon"$/);
    expect(issue(body({ language: 7 }))).toEqual({ path: "configuration.tokenizer.language", message: "expected string, received 7" });
  });
  it.each(["german", "GERMAN", "gErMan", "German"])("takes the language %j in any case, as LanceDB spells it (German)", (language) => {
    expect(parseCreateIndexBody(body({ language })).configuration.tokenizer).toEqual({ language: "German" });
  });
  it("refuses a tokenizer for a neural-only index, which has no full-text part", () => {
    expect(issue(body({ stem: false }, { name: "text", neural_only: true }))).toEqual({ path: "configuration.tokenizer", message: "a neural-only index has no full-text part to tokenize" });
  });
});

describe("index names", () => {
  const named = (name: string) => () => parseCreateIndexBody({ name, configuration: { index_type: { name: "text" } } });
  it.each(["papers", "a", "v1.2_docs-b", "9lives", "x".repeat(64)])("%j is a name", (name) => {
    expect(named(name)().name).toBe(name);
  });
  it.each(["idx_papers", "-x", "a b", ".hidden", "x".repeat(65), "", "naïve", "a/b"])("%j is refused, at the name", (name) => {
    expect(named(name)).toThrow(ValidationError);
    try {
      named(name)();
    } catch (error) {
      expect((error as ValidationError).issues?.[0]?.path).toBe("name");
    }
  });
});

describe("field rule checks at creation", () => {
  const withFields = (fields: object) => ({ configuration: { ...text.configuration, fields } });

  it.each([
    [{ searchable: { allow: ["a..b"] } }, "configuration.fields.searchable.allow.0", 'malformed field path "a..b"'],
    [{ crawlable: { deny: [".x"] } }, "configuration.fields.crawlable.deny.0", "malformed field path"],
    [{ crawlable: { allow: ["title"] }, searchable: { allow: ["title", "body"] } }, "configuration.fields.searchable.allow.1", '"body" is not crawlable'],
    [{ crawlable: { deny: ["price"] }, filterable: { allow: ["price"] } }, "configuration.fields.filterable.allow.0", '"price" is not crawlable'],
    [{ filterable: { allow: ["price"] }, types: { rating: "int" } }, "configuration.fields.types.rating", '"rating" has a type but is not filterable'],
    [{ filterable: { deny: ["price"] }, types: { price: "float" } }, "configuration.fields.types.price", "not filterable"],
    [{ searchable: { allow: ["title"] }, segment_delimiter: { body: "\\n" } }, "configuration.fields.segment_delimiter.body", "not a searchable field"],
    [{ segment_delimiter: { "meta.body": "\\n" } }, "configuration.fields.segment_delimiter.meta.body", "top-level"],
  ])("rejects %j at %s", (fields, path, message) => {
    const issues = issuesOf(withFields(fields));
    expect(issues[0]?.path).toBe(path);
    expect(issues[0]?.message).toContain(message);
  });

  it.each([
    // a nested allow entry below a crawlable parent, and a parent of a crawlable nested entry
    { crawlable: { allow: ["maker"] }, searchable: { allow: ["maker.name"] } },
    { crawlable: { allow: ["maker.name"] }, searchable: { allow: ["maker"] } },
    // types for fields admitted by an omitted filterable allow, nested ones included
    { types: { price: "float", "maker.founded": "int" } },
  ])("accepts %j", (fields) => {
    expect(() => parseCreateIndexBody(withFields(fields))).not.toThrow();
  });
});
