import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FieldType } from "../../../src/engine/config.js";
import { ValidationError } from "../../../src/engine/errors.js";
import { filterColumn } from "../../../src/engine/filter-fields.js";
import { parseFilter, type FilterNode } from "../../../src/engine/search/filter-syntax.js";
import { compileFilter, type FieldResolver } from "../../../src/engine/search/filters.js";
import { validationError } from "../../helpers/errors.js";
import { filterArb } from "../../helpers/filter-arbitraries.js";

const TYPES: Record<string, FieldType> = { price: "float", rating: "int", in_stock: "bool", released: "datetime", category: "string", "maker.country": "string" };
const resolver: FieldResolver = (path) => {
  if (path === "secret") return { kind: "refused", message: `"secret" is not a filterable field of this index`, hint: "Filterable fields: price." };
  if (path === "unseen") return { kind: "empty", type: "string" };
  return { kind: "column", column: filterColumn(path), type: TYPES[path] ?? "string" };
};
const c = (path: string) => filterColumn(path);
const compile = (text: string) => compileFilter(parseFilter(text) as FilterNode, resolver);

describe("compileFilter", () => {
  it.each([
    ["category:books", `(${c("category")} IS NOT NULL AND ${c("category")} = 'books')`],
    ["category:\"it's\"", `(${c("category")} IS NOT NULL AND ${c("category")} = 'it''s')`],
    ["price:12.5", `(${c("price")} IS NOT NULL AND ${c("price")} = 12.5)`],
    ["rating:>=4", `(${c("rating")} IS NOT NULL AND ${c("rating")} >= 4)`],
    ["in_stock:true", `(${c("in_stock")} IS NOT NULL AND ${c("in_stock")} = 1)`],
    ["in_stock:FALSE", `(${c("in_stock")} IS NOT NULL AND ${c("in_stock")} = 0)`],
    ["released:>2024-01-01", `(${c("released")} IS NOT NULL AND ${c("released")} > ${Date.UTC(2024, 0, 1)})`],
    ["price:[10 TO 20}", `(${c("price")} IS NOT NULL AND ${c("price")} >= 10 AND ${c("price")} < 20)`],
    ["price:{* TO 20]", `(${c("price")} IS NOT NULL AND ${c("price")} <= 20)`],
    ["price:[* TO *]", `(${c("price")} IS NOT NULL)`],
    ["price:*", `(${c("price")} IS NOT NULL)`],
    ["maker.country:UK", `(${c("maker.country")} IS NOT NULL AND ${c("maker.country")} = 'UK')`],
    ["unseen:x", "FALSE"],
    ["NOT category:a OR category:b AND rating:1", `((NOT (${c("category")} IS NOT NULL AND ${c("category")} = 'a')) OR ((${c("category")} IS NOT NULL AND ${c("category")} = 'b') AND (${c("rating")} IS NOT NULL AND ${c("rating")} = 1)))`],
    ["category:\"a\\\\'; DROP TABLE x; --\"", `(${c("category")} IS NOT NULL AND ${c("category")} = 'a\\''; DROP TABLE x; --')`],
  ])("%s", (text, clause) => {
    expect(compile(text)).toBe(clause);
  });

  it.each([
    ["secret:x", 1, '"secret" is not a filterable field'],
    ["price:cheap", 7, '"price" is a float field: expected a float, got "cheap"'],
    ["rating:4.5", 8, "expected an int"],
    ["in_stock:yes", 10, "expected true or false"],
    ["released:yesterday", 10, "RFC 3339"],
    ["price:[1 TO x]", 13, "expected a float"],
    ["in_stock:>0", 1, "bool field"],
    ["in_stock:[true TO false]", 1, "a range needs"],
    ['category:"a\u0000b"', 10, "NUL"],
    ["category:a AND unseen:x AND secret:y", 29, "not a filterable field"],
  ])("%s fails at column %i", (text, column, message) => {
    const error = validationError(() => compile(text));
    expect(error.issues?.[0]?.column).toBe(column);
    expect(error.message).toContain(message);
  });

  it("passes the resolver's hint on", () => {
    expect(validationError(() => compile("secret:x")).hint).toBe("Filterable fields: price.");
  });
});

/** The clause with every string literal replaced by ? and every number by #: its structure. */
function shape(clause: string): string {
  return clause.replace(/'(?:[^']|'')*'/g, "?").replace(/(?<![\w])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w])/g, "#");
}

/** Tokens of a clause outside string literals. */
function tokens(clause: string): string[] {
  return clause
    .replace(/'(?:[^']|'')*'/g, " ")
    .split(/\s+|(?=[()])|(?<=[()])/)
    .filter((t) => t !== "");
}
const VOCABULARY = /^(?:\(|\)|AND|OR|NOT|IS|NULL|FALSE|=|>|>=|<|<=|f_[0-9a-f]+|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)$/;

function withValues(node: FilterNode, value: (text: string) => string): FilterNode {
  switch (node.kind) {
    case "and":
    case "or":
      return { ...node, items: node.items.map((item) => withValues(item, value)) };
    case "not":
      return { ...node, item: withValues(node.item, value) };
    case "match":
    case "compare":
      return { ...node, value: { ...node.value, text: value(node.value.text) } };
    case "range":
      return {
        ...node,
        lower: node.lower && { ...node.lower, value: { ...node.lower.value, text: value(node.lower.value.text) } },
        upper: node.upper && { ...node.upper, value: { ...node.upper.value, text: value(node.upper.value.text) } },
      };
    default:
      return node;
  }
}

describe("compileFilter: no input changes the structure of the clause", () => {
  const stringFields: FieldResolver = (path) => ({ kind: "column", column: filterColumn(path), type: "string" });
  const nul = (node: FilterNode) => JSON.stringify(node).includes("\\u0000");

  it("the clause's structure depends on the tree, never on the values", () => {
    fc.assert(
      fc.property(filterArb, (node) => {
        fc.pre(!nul(node));
        expect(shape(compileFilter(node, stringFields))).toBe(shape(compileFilter(withValues(node, () => "v"), stringFields)));
      }),
      { numRuns: 1000 },
    );
  });

  it("any filter text compiles to known tokens only, or fails with INVALID_FILTER", () => {
    const nasty = fc.constantFrom("'", "''", "\\", "\\'", '\\"', "--", ";", "/*", "*/", " OR 1=1", "DROP TABLE objects", "é", "\u{1F600}", "\u202E", "%", "_", ")", "(");
    const value = fc.oneof(fc.string({ unit: "binary", maxLength: 10 }), fc.array(nasty, { maxLength: 5 }).map((p) => p.join("")));
    const field = fc.constantFrom("price", "rating", "in_stock", "released", "category", "maker.country", "unseen");
    const condition = fc.tuple(field, value, fc.constantFrom("q", "bare", "cmp", "range")).map(([f, v, how]) => {
      const quoted = `"${v.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
      if (how === "q") return `${f}:${quoted}`;
      if (how === "bare") return `${f}:${v}`;
      if (how === "cmp") return `${f}:>=${quoted}`;
      return `${f}:[${quoted} TO *]`;
    });
    const text = fc.oneof(
      fc.array(condition, { minLength: 1, maxLength: 4 }).chain((cs) => fc.constantFrom(" AND ", " OR ", " AND NOT ").map((op) => cs.join(op))),
      fc.string({ unit: "binary", maxLength: 40 }),
    );
    fc.assert(
      fc.property(text, (filter) => {
        let clause: string;
        try {
          const node = parseFilter(filter);
          if (node === null) return;
          clause = compileFilter(node, resolver);
        } catch (error) {
          expect(error).toBeInstanceOf(ValidationError);
          expect((error as ValidationError).code).toBe("INVALID_FILTER");
          return;
        }
        for (const token of tokens(clause)) expect(token).toMatch(VOCABULARY);
        expect(clause.split("'").length % 2).toBe(1); // quotes balanced: every literal closed
      }),
      { numRuns: 3000 },
    );
  });
});
