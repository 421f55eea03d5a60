import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/engine/errors.js";
import { formatFilter, MAX_FILTER_DEPTH, parseFilter, type FilterNode } from "../../../src/engine/search/filter-syntax.js";
import { MAX_FILTER_CONDITIONS } from "../../../src/engine/search/limits.js";
import { validationError } from "../../helpers/errors.js";
import { filterArb } from "../../helpers/filter-arbitraries.js";

/** The tree without positions, for comparing shapes. */
function strip(node: FilterNode | null): unknown {
  return JSON.parse(JSON.stringify(node, (key, value) => (key === "column" ? undefined : value)));
}

const f = (path: string) => ({ path });
const lit = (text: string, quoted = false) => ({ text, quoted });

describe("parseFilter: constructs", () => {
  it.each([
    ["category:books", { kind: "match", field: f("category"), value: lit("books") }],
    ['title:"the quiet harbour"', { kind: "match", field: f("title"), value: lit("the quiet harbour", true) }],
    ['title:"say \\"hi\\" \\\\ bye"', { kind: "match", field: f("title"), value: lit('say "hi" \\ bye', true) }],
    ["maker.country:UK", { kind: "match", field: f("maker.country"), value: lit("UK") }],
    ["released:2024-03-14T09:00:00Z", { kind: "match", field: f("released"), value: lit("2024-03-14T09:00:00Z") }],
    ["price: 10", { kind: "match", field: f("price"), value: lit("10") }],
    ["größe:L", { kind: "match", field: f("größe"), value: lit("L") }],
    ["price:*", { kind: "exists", field: f("price") }],
    ["price:>10", { kind: "compare", field: f("price"), op: ">", value: lit("10") }],
    ["price:>=10", { kind: "compare", field: f("price"), op: ">=", value: lit("10") }],
    ["price:<10", { kind: "compare", field: f("price"), op: "<", value: lit("10") }],
    ["price:<= 10", { kind: "compare", field: f("price"), op: "<=", value: lit("10") }],
    ['name:>"m"', { kind: "compare", field: f("name"), op: ">", value: lit("m", true) }],
    ["price:[10 TO 20]", { kind: "range", field: f("price"), lower: { value: lit("10"), inclusive: true }, upper: { value: lit("20"), inclusive: true } }],
    ["price:{10 TO 20}", { kind: "range", field: f("price"), lower: { value: lit("10"), inclusive: false }, upper: { value: lit("20"), inclusive: false } }],
    ["price:[10 TO 20}", { kind: "range", field: f("price"), lower: { value: lit("10"), inclusive: true }, upper: { value: lit("20"), inclusive: false } }],
    ["price:[* TO 20]", { kind: "range", field: f("price"), lower: null, upper: { value: lit("20"), inclusive: true } }],
    ["price:[10 TO *]", { kind: "range", field: f("price"), lower: { value: lit("10"), inclusive: true }, upper: null }],
    ['name:["a b" TO "c"]', { kind: "range", field: f("name"), lower: { value: lit("a b", true), inclusive: true }, upper: { value: lit("c", true), inclusive: true } }],
    ["NOT a:1", { kind: "not", item: { kind: "match", field: f("a"), value: lit("1") } }],
    ["NOT(a:1)", { kind: "not", item: { kind: "match", field: f("a"), value: lit("1") } }],
    ["a:1 AND b:2", { kind: "and", items: [{ kind: "match", field: f("a"), value: lit("1") }, { kind: "match", field: f("b"), value: lit("2") }] }],
    ["a:1 OR b:2", { kind: "or", items: [{ kind: "match", field: f("a"), value: lit("1") }, { kind: "match", field: f("b"), value: lit("2") }] }],
    ["(a:1)", { kind: "match", field: f("a"), value: lit("1") }],
    ["a:AND", { kind: "match", field: f("a"), value: lit("AND") }],
  ])("%s", (text, expected) => {
    expect(strip(parseFilter(text))).toEqual(expected);
  });

  it("binds NOT tighter than AND, and AND tighter than OR", () => {
    expect(formatFilter(parseFilter("a:1 OR NOT b:2 AND c:3") as FilterNode)).toBe("(a:1 OR (NOT b:2 AND c:3))");
    expect(formatFilter(parseFilter("(a:1 OR b:2) AND c:3") as FilterNode)).toBe("((a:1 OR b:2) AND c:3)");
    expect(formatFilter(parseFilter("a:1 AND b:2 AND c:3 OR d:4") as FilterNode)).toBe("((a:1 AND b:2 AND c:3) OR d:4)");
  });

  it("records the column of fields and values", () => {
    const node = parseFilter('  price:>10 AND name:"x"') as { items: { field: { column: number }; value: { column: number } }[] };
    expect(node.items[0]?.field.column).toBe(3);
    expect(node.items[0]?.value.column).toBe(10);
    expect(node.items[1]?.value.column).toBe(22);
  });

  it("an empty filter filters nothing", () => {
    expect(parseFilter("")).toBeNull();
    expect(parseFilter("   ")).toBeNull();
  });
});

describe("parseFilter: errors point at the column", () => {
  it.each([
    ["price", 6, 'expected ":" after field "price"'],
    ["price 10", 6, 'expected ":"'],
    ["a:1 b:2", 5, "expected AND, OR or the end of the filter"],
    ["a:1 and b:2", 5, "expected AND, OR"],
    ["a:1 AND", 8, "found the end of the filter"],
    ["AND a:1", 1, "expected a condition"],
    ["a:1 OR OR b:2", 8, "expected a condition"],
    ["(a:1", 1, '"(" is never closed'],
    ["a:1)", 4, 'unmatched ")"'],
    ["()", 2, 'unexpected ")"'],
    ["a:", 3, 'expected a value for "a"'],
    ["a:)", 3, 'expected a value for "a"'],
    ['a:"open', 3, "the quoted value is never closed"],
    ['a:"ends with backslash\\', 3, "never closed"],
    ["a:[1 20]", 6, "expected TO"],
    ["a:[1 TO 2", 3, "the range is never closed"],
    ["a:[1 TO 2)", 10, 'expected "]" or "}"'],
    ["a:[ TO 2]", 5, "expected a lower bound"],
    ["a:>", 4, 'expected a value after ">"'],
    ["a:>*", 4, '"*" cannot follow ">"'],
    ["a:(x OR y)", 3, "grouped values are not supported"],
    ["a:ab*", 5, "wildcards are not supported"],
    ["-a:1", 1, "expected a field name"],
    ["a-b:1", 2, 'expected ":" after field "a"'],
    ["a..b:1", 2, 'expected ":"'],
    ["and:1 AND", 10, "found the end"],
  ])("%j → column %i: %s", (text, column, message) => {
    const v = validationError(() => parseFilter(text));
    expect(v.code).toBe("INVALID_FILTER");
    expect(v.issues?.[0]).toMatchObject({ path: "filter", column });
    expect(v.message).toContain(`column ${column}`);
    expect(v.message).toContain(message);
  });

  it("hints that operators are upper case", () => {
    const error = validationError(() => parseFilter("a:1 OR and b:2"));
    expect(error.message).toMatch(/expected ":" after field "and"/);
    expect(error.hint).toContain("Operators are upper case: AND");
  });

  it.each([
    ["(", ")", 10, 19],
    ["NOT ", "", 10, 52],
    ["NOT (", ")", 5, 37],
  ])("takes %j nested %i times (MAX_FILTER_DEPTH levels), and refuses one more where the extra level starts", (open, close, times, column) => {
    expect(MAX_FILTER_DEPTH).toBe(10);
    const nested = (n: number) => `b:2 OR ${open.repeat(n)}a:1${close.repeat(n)}`;
    expect(parseFilter(nested(times))).not.toBeNull();
    const error = validationError(() => parseFilter(nested(times + 1)));
    expect(error.message).toBe(`Invalid filter at column ${column}: nested deeper than 10 levels (parentheses and NOTs)`);
    expect(error.issues?.[0]?.column).toBe(column);
  });

  it("refuses nesting deeper than the limit without overflowing the stack", () => {
    expect(() => parseFilter(`${"(".repeat(MAX_FILTER_DEPTH + 1)}a:1${")".repeat(MAX_FILTER_DEPTH + 1)}`)).toThrow(/nested deeper/);
    expect(() => parseFilter(`${"NOT ".repeat(100_000)}a:1`)).toThrow(ValidationError);
    expect(parseFilter(`${"(".repeat(10)}a:1${")".repeat(10)}`)).not.toBeNull();
  });
});

describe("parseFilter: the number of conditions", () => {
  const conditions = (n: number) => Array.from({ length: n }, (_, i) => `a:${i}`);

  it("takes MAX_FILTER_CONDITIONS conditions", () => {
    expect((parseFilter(conditions(MAX_FILTER_CONDITIONS).join(" OR ")) as { items: unknown[] }).items).toHaveLength(MAX_FILTER_CONDITIONS);
  });

  it.each([
    [MAX_FILTER_CONDITIONS + 1, " OR ", "1,001"],
    [5000, " AND ", "5,000"],
    [5000, " AND NOT ", "5,000"],
  ])("refuses %i joined by %j, naming both counts, at the first condition over the limit", (n, joint, count) => {
    const items = conditions(n);
    const error = validationError(() => parseFilter(items.join(joint)));
    expect(error.code).toBe("INVALID_FILTER");
    expect(error.message).toContain(`this filter has ${count} conditions; at most 1,000 are supported`);
    expect(error.issues?.[0]?.column).toBe(items.slice(0, MAX_FILTER_CONDITIONS).join(joint).length + joint.length + 1);
  });

  it("reports a syntax error before the count", () => {
    expect(validationError(() => parseFilter(`${conditions(2000).join(" OR ")} OR`)).message).toContain("found the end of the filter");
  });
});

describe("parseFilter: properties", () => {
  it("parses what formatFilter writes back to the same tree", () => {
    fc.assert(
      fc.property(filterArb, (node) => {
        expect(strip(parseFilter(formatFilter(node)))).toEqual(strip(node));
      }),
      { numRuns: 500 },
    );
  });

  it("any text either parses or fails with INVALID_FILTER, never anything else", () => {
    const pieces = fc.constantFrom("a:", "b.c:", '"', "\\", "(", ")", "[", "]", "{", "}", " TO ", " AND ", " OR ", "NOT ", "*", ">", "<=", "x", "1", " ", "'", ";", "--", "é", "\u{1F600}");
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "binary", maxLength: 40 }), fc.array(pieces, { maxLength: 12 }).map((p) => p.join(""))), (text) => {
        try {
          parseFilter(text);
        } catch (error) {
          expect(error).toBeInstanceOf(ValidationError);
          expect((error as ValidationError).code).toBe("INVALID_FILTER");
          const column = (error as ValidationError).issues?.[0]?.column as number;
          expect(column).toBeGreaterThanOrEqual(1);
          expect(column).toBeLessThanOrEqual(text.length + 1);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
