import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FieldType } from "../../../src/engine/config.js";
import { ValidationError } from "../../../src/engine/errors.js";
import { filterColumn, listColumn } from "../../../src/engine/filter-fields.js";
import { MAX_FILTER_DEPTH, parseFilter, type FilterNode } from "../../../src/engine/search/filter-syntax.js";
import { compileClause, compileFilter, MAX_CLAUSE_COST, type FieldResolver } from "../../../src/engine/search/filters.js";
import { MAX_FILTER_CONDITIONS } from "../../../src/engine/search/limits.js";
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
    // the operand that nests deepest comes first: LanceDB's parser needs a level less for it there
    ["NOT category:a OR category:b AND rating:1", `(((${c("category")} IS NOT NULL AND ${c("category")} = 'b') AND (${c("rating")} IS NOT NULL AND ${c("rating")} = 1)) OR NOT (${c("category")} IS NOT NULL AND ${c("category")} = 'a'))`],
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

  describe("fields that hold lists", () => {
    const l = (path: string) => listColumn(path);
    const lists: FieldResolver = (path) => (path === "sizes" ? { kind: "column", list: l("sizes"), type: "int" } : { kind: "column", column: c(path), list: l(path), type: TYPES[path] ?? "string" });
    const compileLists = (text: string) => compileFilter(parseFilter(text) as FilterNode, lists);
    const sorted = (bound: string, order: string) => `array_sort(array_append(${l("sizes")}, ${bound}), '${order}')`;

    it.each([
      ["sizes:38", `array_has_any(${l("sizes")}, make_array(38))`],
      ["sizes:38 OR sizes:40", `array_has_any(${l("sizes")}, make_array(38, 40))`],
      ["NOT sizes:38", `NOT (${l("sizes")} IS NOT NULL AND array_has_any(${l("sizes")}, make_array(38)))`],
      ["sizes:*", `(${l("sizes")} IS NOT NULL)`],
      ["sizes:>38", `(${l("sizes")} IS NOT NULL AND array_max(${l("sizes")}) > 38)`],
      ["sizes:[* TO 38}", `(${l("sizes")} IS NOT NULL AND array_min(${l("sizes")}) < 38)`],
      // a few ints, or one value: the values themselves
      ["sizes:[38 TO 40]", `array_has_any(${l("sizes")}, make_array(38, 39, 40))`],
      ["sizes:{38 TO 40}", `array_has_any(${l("sizes")}, make_array(39))`],
      ["sizes:{38 TO 39}", "FALSE"],
      ["NOT sizes:[38 TO 38]", `NOT (${l("sizes")} IS NOT NULL AND array_has_any(${l("sizes")}, make_array(38)))`],
      // more: the smallest element from the lower bound on, within the upper bound
      [
        "sizes:[0 TO 100]",
        `(${l("sizes")} IS NOT NULL AND COALESCE(array_element(${sorted("0", "ASC")}, CAST(array_position(${sorted("0", "ASC")}, 0) AS BIGINT) + CAST(1 AS BIGINT)) <= 100, FALSE))`,
      ],
      [
        "sizes:{0 TO 100}",
        `(${l("sizes")} IS NOT NULL AND COALESCE(array_element(${sorted("0", "DESC")}, CAST(array_position(${sorted("0", "DESC")}, 0) AS BIGINT) - CAST(1 AS BIGINT)) < 100, FALSE))`,
      ],
      // (the list's condition first: it needs more of LanceDB's parser, see chain())
      ["category:a", `(array_has_any(${l("category")}, make_array('a')) OR (${c("category")} IS NOT NULL AND ${c("category")} = 'a'))`],
      ["category:a OR category:\"it's\"", `(array_has_any(${l("category")}, make_array('a', 'it''s')) OR (${c("category")} IS NOT NULL AND ${c("category")} IN ('a', 'it''s')))`],
      ["price:<=2", `((${l("price")} IS NOT NULL AND array_min(${l("price")}) <= 2) OR (${c("price")} IS NOT NULL AND ${c("price")} <= 2))`],
    ])("%s", (text, clause) => {
      expect(compileLists(text)).toBe(clause);
    });
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
    .split(/\s+|(?=[(),])|(?<=[(),])/)
    .filter((t) => t !== "");
}
const VOCABULARY = /^(?:\(|\)|,|AND|OR|NOT|IS|NULL|FALSE|IN|=|>|>=|<|<=|f_[0-9a-f]+|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)$/;

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

/**
 * A compiled clause as a function of a row (column → value; a missing column is NULL), in SQL's
 * three-valued logic: the oracle for restructured clauses. Reads only what compileFilter writes.
 */
function sqlEvaluator(clause: string): (row: Record<string, string | number>) => boolean | null {
  type Value = string | number | boolean | null;
  type Expr = (row: Record<string, string | number>) => Value;
  const tokens = clause.match(/'(?:[^']|'')*'|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|f_[0-9a-f]+|>=|<=|[()=<>,]|[A-Z]+|\S/g) ?? [];
  let i = 0;
  const take = (token?: string): string => {
    const next = tokens[i++];
    if (next === undefined || (token !== undefined && next !== token)) throw new Error(`expected ${token ?? "a token"} at token ${i} of ${clause}`);
    return next;
  };
  const list = (item: () => Expr, operator: string, combine: (values: Value[]) => Value): Expr => {
    const items = [item()];
    while (tokens[i] === operator) take() && items.push(item());
    return items.length === 1 ? (items[0] as Expr) : (row) => combine(items.map((e) => e(row)));
  };
  const or = (): Expr => list(and, "OR", (v) => (v.includes(true) ? true : v.includes(null) ? null : false));
  const and = (): Expr => list(not, "AND", (v) => (v.includes(false) ? false : v.includes(null) ? null : true));
  const not = (): Expr => {
    if (tokens[i] !== "NOT") return predicate();
    take();
    const item = not();
    return (row) => (item(row) === null ? null : !item(row));
  };
  const primary = (): Expr => {
    const token = take();
    if (token === "(") {
      const inner = or();
      take(")");
      return inner;
    }
    if (token === "FALSE") return () => false;
    if (token.startsWith("'")) return () => token.slice(1, -1).replaceAll("''", "'");
    if (token.startsWith("f_")) return (row) => row[token] ?? null;
    if (/^-?\d/.test(token)) return () => Number(token);
    throw new Error(`unexpected ${token} in ${clause}`);
  };
  const compare: Record<string, (a: string | number, b: string | number) => boolean> = { "=": (a, b) => a === b, "<": (a, b) => a < b, "<=": (a, b) => a <= b, ">": (a, b) => a > b, ">=": (a, b) => a >= b };
  const predicate = (): Expr => {
    const left = primary();
    const operator = tokens[i] as string;
    if (operator === "IS") {
      take() && take("NOT") && take("NULL");
      return (row) => left(row) !== null;
    }
    if (operator === "IN") {
      take() && take("(");
      const values = [primary()];
      while (tokens[i] === ",") take() && values.push(primary());
      take(")");
      return (row) => (left(row) === null ? null : values.some((value) => value(row) === left(row)));
    }
    if (!(operator in compare)) return left;
    take();
    const right = primary();
    return (row) => {
      const [a, b] = [left(row), right(row)];
      return a === null || b === null ? null : (compare[operator] as (a: unknown, b: unknown) => boolean)(a, b);
    };
  };
  const expr = or();
  if (i !== tokens.length) throw new Error(`left over at token ${i} of ${clause}`);
  return (row) => expr(row) as boolean | null;
}

/** What a filter over string fields selects, evaluated on the tree itself (the oracle's other side). */
function selects(node: FilterNode, row: Record<string, string>): boolean {
  switch (node.kind) {
    case "and":
      return node.items.every((item) => selects(item, row));
    case "or":
      return node.items.some((item) => selects(item, row));
    case "not":
      return !selects(node.item, row);
    default:
      break;
  }
  const value = row[node.field.path];
  if (value === undefined) return false;
  switch (node.kind) {
    case "exists":
      return true;
    case "match":
      return value === node.value.text;
    case "compare":
      return { ">": value > node.value.text, ">=": value >= node.value.text, "<": value < node.value.text, "<=": value <= node.value.text }[node.op];
    case "range":
      return (
        (node.lower === null || (node.lower.inclusive ? value >= node.lower.value.text : value > node.lower.value.text)) &&
        (node.upper === null || (node.upper.inclusive ? value <= node.upper.value.text : value < node.upper.value.text))
      );
  }
}

/** Every literal of a tree, for rows that match some of its conditions. */
function literals(node: FilterNode): string[] {
  switch (node.kind) {
    case "and":
    case "or":
      return node.items.flatMap(literals);
    case "not":
      return literals(node.item);
    case "exists":
      return [];
    case "match":
    case "compare":
      return [node.value.text];
    case "range":
      return [node.lower?.value.text, node.upper?.value.text].filter((text): text is string => text !== undefined);
  }
}

/** Deepest nesting of parentheses in a clause, and most operands joined by AND/OR inside one pair of them. */
function nesting(clause: string): { depth: number; chain: number } {
  const stack = [1];
  let depth = 0;
  let chain = 1;
  for (const token of tokens(clause)) {
    if (token === "(") stack.push(1);
    else if (token === ")") stack.pop();
    else if (token === "AND" || token === "OR") stack[stack.length - 1] = (stack.at(-1) as number) + 1;
    depth = Math.max(depth, stack.length - 1);
    chain = Math.max(chain, stack.at(-1) as number);
  }
  return { depth, chain };
}

describe("compileFilter: long filters and deep ones", () => {
  it.each([
    ["category:a OR category:b OR category:c", `(${c("category")} IS NOT NULL AND ${c("category")} IN ('a', 'b', 'c'))`],
    ["rating:1 OR price:2 OR rating:3", `((${c("rating")} IS NOT NULL AND ${c("rating")} IN (1, 3)) OR (${c("price")} IS NOT NULL AND ${c("price")} = 2))`],
    ["in_stock:true OR in_stock:false", `(${c("in_stock")} IS NOT NULL AND ${c("in_stock")} IN (1, 0))`],
    ["released:2024-01-01 OR released:2024-01-02", `(${c("released")} IS NOT NULL AND ${c("released")} IN (${Date.UTC(2024, 0, 1)}, ${Date.UTC(2024, 0, 2)}))`],
    // nested ORs are one list; a NOT, a comparison and an AND are not equality matches
    [
      "(category:a OR category:b) OR NOT category:c OR category:d OR rating:>2",
      `(NOT (${c("category")} IS NOT NULL AND ${c("category")} = 'c') OR (${c("category")} IS NOT NULL AND ${c("category")} IN ('a', 'b', 'd')) OR (${c("rating")} IS NOT NULL AND ${c("rating")} > 2))`,
    ],
    ["category:a AND category:b", `((${c("category")} IS NOT NULL AND ${c("category")} = 'a') AND (${c("category")} IS NOT NULL AND ${c("category")} = 'b'))`],
    ["NOT (category:a OR category:b)", `NOT (${c("category")} IS NOT NULL AND ${c("category")} IN ('a', 'b'))`],
    ["unseen:x OR unseen:y", "(FALSE OR FALSE)"],
  ])("%s", (text, clause) => {
    expect(compile(text)).toBe(clause);
  });

  it("turns the 700 OR-ed values that crashed LanceDB into one IN list", () => {
    const values = Array.from({ length: 700 }, (_, i) => `v${i}`);
    const column = c("category");
    expect(compile(values.map((v) => `category:${v}`).join(" OR "))).toBe(`(${column} IS NOT NULL AND ${column} IN (${values.map((v) => `'${v}'`).join(", ")}))`);
  });

  it.each([
    ["OR", (i: number) => `price:[${i} TO ${i + 0.5}]`, 1],
    ["AND", (i: number) => `NOT rating:${i}`, 1],
    ["OR", (i: number) => `(category:c${i} AND rating:${i})`, 2],
  ])("joins 1,000 conditions with %s in chains of at most 4, 5 deep, each operand once", (operator, condition, perOperand) => {
    const items = Array.from({ length: MAX_FILTER_CONDITIONS / perOperand }, (_, i) => condition(i));
    const clause = compile(items.join(` ${operator} `));
    const operands = items.map((item) => compile(item));
    // 1,000 (or 500) operands: 5 levels of chains of 4, then the operand's own parentheses
    expect(nesting(clause)).toEqual({ depth: 5 + perOperand, chain: 4 });
    let rest = clause;
    for (const sql of operands) {
      expect(rest.split(sql).length - 1).toBe(1);
      rest = rest.replace(sql, " X ");
    }
    expect(new Set(tokens(rest))).toEqual(new Set(["(", ")", "X", operator]));
  });
});

describe("compileFilter: the clause selects what the filter selects", () => {
  const stringFields: FieldResolver = (path) => ({ kind: "column", column: filterColumn(path), type: "string" });
  const PATHS = ["a", "b", "price", "maker.country", "größe", "x_1"];
  /** Wide trees: long ORs and ANDs of few fields and values, so IN lists and chains of chains are built. */
  const wideArb: fc.Arbitrary<FilterNode> = fc.letrec<{ node: FilterNode }>((tie) => {
    const field = fc.constantFrom("a", "b").map((path) => ({ path, column: 1 }));
    const value = fc.constantFrom("v0", "v1", "v2", "v3", "v4").map((text) => ({ text, quoted: false, column: 1 }));
    const condition = fc.oneof(
      { weight: 4, arbitrary: fc.record({ kind: fc.constant("match" as const), field, value }) },
      fc.record({ kind: fc.constant("compare" as const), field, op: fc.constantFrom(">", "<=") as fc.Arbitrary<">">, value }),
      fc.record({ kind: fc.constant("exists" as const), field }),
    );
    return {
      node: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        condition,
        fc.record({ kind: fc.constantFrom("and" as const, "or" as const), items: fc.array(tie("node"), { minLength: 2, maxLength: 40 }) }),
        fc.record({ kind: fc.constant("not" as const), item: tie("node") }),
      ),
    };
  }).node;
  const rowsArb = fc.array(fc.array(fc.nat(), { minLength: PATHS.length, maxLength: PATHS.length }), { minLength: 8, maxLength: 8 });

  it.each([
    ["random trees", filterArb],
    ["wide trees", wideArb],
  ])("on %s, in SQL's three-valued logic", (_, arb) => {
    fc.assert(
      fc.property(arb, rowsArb, (node, picks) => {
        fc.pre(!JSON.stringify(node).includes("\\u0000"));
        const evaluate = sqlEvaluator(compileFilter(node, stringFields));
        const pool = [...new Set([...literals(node), "", "m"])];
        for (const pick of picks) {
          const row: Record<string, string> = {};
          PATHS.forEach((path, k) => {
            const n = (pick[k] as number) % (pool.length + 1);
            if (n < pool.length) row[path] = pool[n] as string;
          });
          const columns = Object.fromEntries(Object.entries(row).map(([path, v]) => [filterColumn(path), v]));
          expect(evaluate(columns) === true).toBe(selects(node, row));
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe("compileFilter: what LanceDB's SQL parser can take", () => {
  const condition = (column: number): FilterNode => ({ kind: "match", field: { path: "category", column }, value: { text: "x", quoted: false, column: column + 9 } });
  const nots = (n: number, item: FilterNode): FilterNode => (n === 0 ? item : { kind: "not", item: nots(n - 1, item) });

  it("refuses a clause nested deeper than MAX_CLAUSE_COST, at the condition nested deepest", () => {
    const fits = nots(MAX_CLAUSE_COST - 4, condition(7));
    expect(compileClause(fits, resolver).cost).toBe(MAX_CLAUSE_COST);
    expect(compileFilter(fits, resolver)).toMatch(/^(NOT ){36}\(/);
    const deep: FilterNode = { kind: "or", items: [condition(1), nots(MAX_CLAUSE_COST - 3, condition(7)), condition(30)] };
    const error = validationError(() => compileFilter(deep, resolver));
    expect(error.code).toBe("INVALID_FILTER");
    expect(error.issues?.[0]?.column).toBe(7);
    expect(error.message).toContain(`its SQL would nest ${MAX_CLAUSE_COST + 2} levels deep; at most ${MAX_CLAUSE_COST} are supported`);
  });

  /** Each level: the deeper part AND a condition, OR another condition; 1,000 conditions in all. */
  function worstCase(levels: number, wrap: (inner: string, level: number) => string): string {
    let text = Array.from({ length: MAX_FILTER_CONDITIONS - 2 * levels }, (_, i) => `price:[${i} TO ${i + 0.5}]`).join(" OR ");
    for (let level = 0; level < levels; level++) text = wrap(text, level);
    return text;
  }

  // The costliest shapes a search over nesting levels found (a level adds 2: its AND and its OR).
  // The parser takes 47 (measured); MAX_CLAUSE_COST is 40.
  it.each([
    ["(…) AND c OR c", (inner: string, i: number) => `(${inner}) AND rating:>${i} OR category:c${i}`, 35],
    ["c OR c AND (…)", (inner: string, i: number) => `category:c${i} OR rating:>${i} AND (${inner})`, 35],
    ["NOT (…) AND c OR c", (inner: string, i: number) => `NOT (${inner}) AND rating:>${i} OR category:c${i}`, 29],
  ])("compiles the costliest filters the parser accepts within MAX_CLAUSE_COST: %s", (_, wrap, cost) => {
    const levels = wrap("x", 0).startsWith("NOT") ? MAX_FILTER_DEPTH / 2 : MAX_FILTER_DEPTH;
    const text = worstCase(levels, wrap);
    expect(() => parseFilter(`(${text})`)).toThrow(/nested deeper/);
    expect(compileClause(parseFilter(text) as FilterNode, resolver).cost).toBe(cost);
    expect(cost).toBeLessThanOrEqual(MAX_CLAUSE_COST);
  });

  it("compiles random filters the parser accepts within MAX_CLAUSE_COST", () => {
    fc.assert(
      fc.property(fc.gen(), (g) => {
        let conditions = 0;
        const leaf = () => (conditions++, g(fc.constantFrom, "price:[1 TO 2]", "category:a", "rating:>3", "in_stock:true"));
        const or = (depth: number): string => Array.from({ length: g(fc.integer, { min: 1, max: 4 }) }, () => and(depth)).join(" OR ");
        const and = (depth: number): string => Array.from({ length: g(fc.integer, { min: 1, max: 4 }) }, () => unary(depth)).join(" AND ");
        const unary = (depth: number): string => {
          const pick = depth < MAX_FILTER_DEPTH && conditions < 300 ? g(fc.integer, { min: 0, max: 9 }) : 9;
          if (pick < 2) return `NOT ${unary(depth + 1)}`;
          if (pick < 7) return `(${or(depth + 1)})`;
          return Array.from({ length: g(fc.integer, { min: 1, max: 30 }) }, leaf).join(g(fc.constantFrom, " OR ", " AND "));
        };
        const text = or(0);
        fc.pre(conditions <= MAX_FILTER_CONDITIONS);
        expect(compileClause(parseFilter(text) as FilterNode, resolver).cost).toBeLessThanOrEqual(MAX_CLAUSE_COST);
      }),
      { numRuns: 100 },
    );
  });
});
