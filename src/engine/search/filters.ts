/**
 * Compiling a parsed filter to a LanceDB `where` clause. Pure.
 *
 * Column names come from the resolver (derived names, checked here again), every literal is
 * read as its field's declared type and written by store/sql.ts, so no part of the filter text
 * reaches the clause except through an escaped literal. Conditions are false for objects without
 * a value (`field IS NOT NULL AND …`), so NOT means "everything else", objects without the field included.
 *
 * A field that holds lists has a list column besides its scalar one (filter-fields.ts), and a
 * condition matches when the scalar or any element of the list does, as Meilisearch, Typesense and
 * Elasticsearch match lists:
 * - `tags:sale` is `array_has_any(l, make_array('sale'))`, which LanceDB answers from a label-list
 *   index; OR-ed matches share one `make_array`. Under a NOT it is guarded by `l IS NOT NULL`, as
 *   NOT of a missing list (NULL) would otherwise be NULL, not true: outside NOTs a NULL acts as false.
 * - `price:>10` is `array_max(l) > 10` (`<`: array_min), and a range with both bounds asks whether
 *   the smallest element at or above the lower bound is within the upper one: the bound is put into
 *   the list, the list sorted, and the element after the bound read (`{a TO …`: sorted descending,
 *   the element before it). DataFusion as LanceDB 0.31 ships it has no `array_filter`. A range of
 *   a few ints (`sizes:[38 TO 42]`), or of one value, is matched as a list of its values instead:
 *   it needs no sort, and the index answers it.
 *
 * The clause is shaped for what LanceDB 0.31 can plan. Measured there (count, full-text and vector
 * queries alike, in the main thread or a worker): a flat chain of 652 ORs overflows a native stack
 * (SIGSEGV; 651 run), lance refuses an expression nested 500 deep ("the filter expression is too
 * long"), and its SQL parser refuses clauses nested about 24 parentheses deep (Clause.cost), while
 * an `IN` list of 100,000 values runs in under a second. So:
 * - equality matches of one field OR-ed together become one `column IN (…)` list;
 * - the operands of an AND or OR are joined in chains of at most CHAIN, the cheapest first (as in
 *   Huffman coding): 1,000 conditions nest 5 chains deep, and the expression is at most CHAIN - 1
 *   times deeper than its cost (120 at MAX_CLAUSE_COST);
 * - a clause that needs more of the parser than MAX_CLAUSE_COST is refused. The parser's limits on
 *   the filter (MAX_FILTER_DEPTH, MAX_FILTER_CONDITIONS) keep filters well below it.
 */
import type { FieldType } from "../config.js";
import { readLiteral, storedValue, type FieldValue } from "../field-types.js";
import { sqlNumber, sqlString } from "../store/sql.js";
import { filterError, MAX_FILTER_DEPTH, type Comparison, type FieldRef, type FilterNode, type Literal } from "./filter-syntax.js";

/** What a filter field refers to in an index. */
export type ResolvedField =
  /** stored columns: `column` holds scalar values, `list` lists' elements (at least one of them is given) */
  | { kind: "column"; column?: string; list?: string; type: FieldType }
  /** filterable, but no object has had a value yet: matches nothing */
  | { kind: "empty"; type: FieldType }
  /** not filterable in this index */
  | { kind: "refused"; message: string; hint?: string };

export type FieldResolver = (path: string) => ResolvedField;

/** A compiled part of a filter. */
export interface Clause {
  /** SQL that stands alone as an operand: parenthesised, `FALSE`, or `NOT` and an operand */
  sql: string;
  /**
   * Recursion LanceDB's SQL parser (sqlparser, limit 50) needs to read it as an operand: 1 per
   * parenthesis, per NOT and per operand after the first of a chain, and 3 inside a condition (4
   * with a negative number). Measured: a clause of cost 47 parses, 48 does not.
   */
  cost: number;
  /** 1-based column of the filter's condition that needs the most */
  column: number;
}

/** Most operands joined in one chain (`a OR b OR c OR d`). */
const CHAIN = 4;
/** Parser recursion of a condition, at most: `(f IS NOT NULL AND f >= -1 AND f <= 2)`, `(f IS NOT NULL AND f IN (…))`. */
const CONDITION_COST = 4;
/**
 * Parser recursion of a list condition, at most (measured, with a negative number): `(l IS NOT NULL
 * AND array_has_any(l, make_array(-1)))` and `(l IS NOT NULL AND array_max(l) > -1)` need 5 or 6.
 */
const LIST_CONDITION_COST = 6;
/** … and of a list range with both bounds (measured 9 with negative numbers). */
const LIST_RANGE_COST = 10;
/** Most parser recursion a clause may need (47 parses; the rest is a margin). */
export const MAX_CLAUSE_COST = 40;

const COLUMN = /^f_[0-9a-f]+$/;
const LIST = /^l_[0-9a-f]+$/;

type Columns = Extract<ResolvedField, { kind: "column" }>;

/** A compiled condition; an equality match keeps its columns and value for merging into one list. */
type Part = Clause & { match?: { columns: Columns; value: string; negated: boolean } };

function literal(type: FieldType, value: Literal, field: FieldRef): string {
  return side(type, ">", value, field).value;
}

function side(type: FieldType, op: Comparison, value: Literal, field: FieldRef): Side {
  const reading = readLiteral(type, value.text);
  if (!reading.ok) throw filterError(value.column, `"${field.path}" is a ${type} field: ${reading.message}`);
  return { op, value: sqlValue(reading.value, value), read: reading.value };
}

function sqlValue(value: FieldValue, at: Literal): string {
  const stored = storedValue(value);
  if (typeof stored === "number") return sqlNumber(stored);
  if (stored.includes("\u0000")) throw filterError(at.column, "a value cannot contain the NUL character");
  return sqlString(stored);
}

function resolve(resolver: FieldResolver, field: FieldRef): Exclude<ResolvedField, { kind: "refused" }> {
  const resolved = resolver(field.path);
  if (resolved.kind === "refused") throw filterError(field.column, resolved.message, resolved.hint);
  if (resolved.kind === "column") {
    if (resolved.column === undefined && resolved.list === undefined) throw new Error(`no column for ${field.path}`);
    if (resolved.column !== undefined && !COLUMN.test(resolved.column)) throw new Error(`not a filter column: ${resolved.column}`);
    if (resolved.list !== undefined && !LIST.test(resolved.list)) throw new Error(`not a list column: ${resolved.list}`);
  }
  return resolved;
}

function noRangeOnBool(type: FieldType, field: FieldRef, what: string): void {
  if (type === "bool") throw filterError(field.column, `"${field.path}" is a bool field: ${what} needs an int, float, datetime or string field`, `Write ${field.path}:true or ${field.path}:false.`);
}

/** A bound of a comparison or range: its operator, its SQL literal and the value it was read as. */
type Side = { op: Comparison; value: string; read: FieldValue };

/** Most values a range on a list of ints is written out as (a range over more is compared element by element). */
const MAX_RANGE_VALUES = 64;

function condition(node: Extract<FilterNode, { field: FieldRef }>, resolver: FieldResolver, negated: boolean): Part {
  const field = resolve(resolver, node.field);
  const at = node.field.column;
  if (node.kind === "match") {
    const value = literal(field.type, node.value, node.field);
    return field.kind === "empty" ? { sql: "FALSE", cost: 0, column: at } : { ...matchAny(field, [value], negated, at), match: { columns: field, value, negated } };
  }
  const sides: Side[] = [];
  if (node.kind === "compare") {
    noRangeOnBool(field.type, node.field, `"${node.op}"`);
    sides.push(side(field.type, node.op, node.value, node.field));
  } else if (node.kind === "range") {
    noRangeOnBool(field.type, node.field, "a range");
    if (node.lower) sides.push(side(field.type, node.lower.inclusive ? ">=" : ">", node.lower.value, node.field));
    if (node.upper) sides.push(side(field.type, node.upper.inclusive ? "<=" : "<", node.upper.value, node.field));
  }
  if (field.kind === "empty") return { sql: "FALSE", cost: 0, column: at };
  const parts: Clause[] = [];
  if (field.column !== undefined) {
    const column = field.column;
    parts.push({ sql: `(${[`${column} IS NOT NULL`, ...sides.map((side) => `${column} ${side.op} ${side.value}`)].join(" AND ")})`, cost: CONDITION_COST, column: at });
  }
  if (field.list !== undefined) {
    const values = rangeValues(field.type, sides);
    parts.push(values ? listMatch(field.list, values, negated, at) : listCondition(field.list, sides, at));
  }
  return parts.length === 1 ? (parts[0] as Clause) : join("OR", parts);
}

/**
 * The values a range with both bounds holds, as SQL literals, when they are few: one value
 * (`[a TO a]`), or at most MAX_RANGE_VALUES ints. A list is then matched against them, as
 * `field:a OR field:b …` would be, which LanceDB answers from the list's index instead of sorting
 * every list. Null for other ranges.
 */
function rangeValues(type: FieldType, sides: readonly Side[]): string[] | null {
  const [lower, upper] = sides;
  if (lower === undefined || upper === undefined) return null;
  if (lower.op === ">=" && upper.op === "<=" && lower.read === upper.read) return [lower.value];
  if (type !== "int") return null;
  const from = (lower.read as number) + (lower.op === ">" ? 1 : 0);
  const to = (upper.read as number) - (upper.op === "<" ? 1 : 0);
  if (to - from + 1 > MAX_RANGE_VALUES) return null;
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => sqlNumber(from + i));
}

/** Whether any element of a list column is within the bounds (none: the list has elements). */
function listCondition(list: string, sides: readonly Side[], at: number): Clause {
  const [first, second] = sides;
  if (first === undefined) return { sql: `(${list} IS NOT NULL)`, cost: LIST_CONDITION_COST, column: at };
  if (second === undefined) {
    const extreme = first.op.startsWith(">") ? "array_max" : "array_min";
    return { sql: `(${list} IS NOT NULL AND ${extreme}(${list}) ${first.op} ${first.value})`, cost: LIST_CONDITION_COST, column: at };
  }
  // Is the smallest element at or above the lower bound within the upper one? With the bound put in
  // and the list sorted, it follows the bound's first place (for `>`: sorted descending, it precedes it).
  const order = first.op === ">=" ? "ASC" : "DESC";
  const sorted = `array_sort(array_append(${list}, ${first.value}), '${order}')`;
  const next = `CAST(array_position(${sorted}, ${first.value}) AS BIGINT) ${order === "ASC" ? "+" : "-"} CAST(1 AS BIGINT)`;
  return { sql: `(${list} IS NOT NULL AND COALESCE(array_element(${sorted}, ${next}) ${second.op} ${second.value}, FALSE))`, cost: LIST_RANGE_COST, column: at };
}

/** Equality with any of `values` (SQL literals) in a field's scalar column or among its list's elements. */
function matchAny(field: Columns, values: readonly string[], negated: boolean, at: number): Clause {
  const parts: Clause[] = [];
  if (field.column !== undefined) {
    const column = field.column;
    const test = values.length === 1 ? `= ${values[0]}` : `IN (${values.join(", ")})`;
    parts.push({ sql: `(${column} IS NOT NULL AND ${column} ${test})`, cost: CONDITION_COST, column: at });
  }
  if (field.list !== undefined) parts.push(listMatch(field.list, values, negated, at));
  return parts.length === 1 ? (parts[0] as Clause) : join("OR", parts);
}

/** Whether a list column has any of `values` (SQL literals; none: false). */
function listMatch(list: string, values: readonly string[], negated: boolean, at: number): Clause {
  if (values.length === 0) return { sql: "FALSE", cost: 0, column: at };
  const any = `array_has_any(${list}, make_array(${values.join(", ")}))`;
  // (unguarded, LanceDB answers it from the list's index; a NULL list reads as false outside a NOT)
  return { sql: negated ? `(${list} IS NOT NULL AND ${any})` : any, cost: LIST_CONDITION_COST, column: at };
}

/** The operands of an AND or OR, with nested ANDs in an AND (ORs in an OR) lifted into it. */
function operands(node: Extract<FilterNode, { items: FilterNode[] }>): FilterNode[] {
  return node.items.flatMap((item) => (item.kind === node.kind ? operands(item) : [item]));
}

/** OR-ed equality matches of one field as one condition on all their values, where the first of them was. */
function mergeMatches(parts: Part[]): Part[] {
  const key = (match: NonNullable<Part["match"]>) => `${match.columns.column ?? ""} ${match.columns.list ?? ""}`;
  const values = new Map<string, string[]>();
  for (const { match } of parts) if (match) values.set(key(match), [...(values.get(key(match)) ?? []), match.value]);
  const out: Part[] = [];
  for (const part of parts) {
    const list = part.match ? values.get(key(part.match)) : undefined;
    if (!part.match || list?.length === 1) {
      out.push(part);
      continue;
    }
    if (list === undefined) continue; // in the list of the field's first match
    out.push(matchAny(part.match.columns, list, part.match.negated, part.column));
    values.delete(key(part.match));
  }
  return out;
}

type Operand = Clause & { order: number };

/** `(a OP b OP …)`, the costliest operand first: each operand after the first adds a level. */
function chain(operator: "AND" | "OR", operands: Operand[]): Operand {
  const [first, ...rest] = [...operands].sort((a, b) => b.cost - a.cost || a.order - b.order) as [Operand, ...Operand[]];
  const restCost = Math.max(...rest.map((operand) => operand.cost + 1));
  const deepest = first.cost >= restCost ? first : (rest.find((operand) => operand.cost + 1 === restCost) as Operand);
  return {
    sql: `(${[first, ...rest].map((operand) => operand.sql).join(` ${operator} `)})`,
    cost: 1 + Math.max(first.cost, restCost),
    column: deepest.column,
    order: Math.min(...operands.map((operand) => operand.order)),
  };
}

/** Operands joined by one operator: chains of at most CHAIN, the cheapest joined first, so the tree stays shallow. */
function join(operator: "AND" | "OR", clauses: Clause[]): Clause {
  const queue: Operand[] = clauses.map((clause, order) => ({ ...clause, order }));
  while (queue.length > 1) {
    queue.sort((a, b) => a.cost - b.cost || a.order - b.order);
    queue.push(chain(operator, queue.splice(0, CHAIN)));
  }
  const { sql, cost, column } = queue[0] as Operand;
  return { sql, cost, column };
}

/** `negated`: the node is inside a NOT, where a condition must be false, never NULL, for an object without a value. */
function compile(node: FilterNode, resolver: FieldResolver, negated = false): Part {
  switch (node.kind) {
    case "and":
      return join("AND", operands(node).map((item) => compile(item, resolver, negated)));
    case "or":
      return join("OR", mergeMatches(operands(node).map((item) => compile(item, resolver, negated))));
    case "not": {
      const item = compile(node.item, resolver, true);
      return { sql: `NOT ${item.sql}`, cost: item.cost + 1, column: item.column };
    }
    default:
      return condition(node, resolver, negated);
  }
}

/** The compiled clause and what LanceDB's parser needs for it, without the check against MAX_CLAUSE_COST. */
export function compileClause(node: FilterNode, resolver: FieldResolver): Clause {
  const { sql, cost, column } = compile(node, resolver);
  return { sql, cost, column };
}

/** The `where` clause of a filter. Throws ValidationError INVALID_FILTER pointing at the column of the problem. */
export function compileFilter(node: FilterNode, resolver: FieldResolver): string {
  const clause = compileClause(node, resolver);
  if (clause.cost > MAX_CLAUSE_COST) {
    throw filterError(clause.column, `nested too deeply for LanceDB (its SQL would nest ${clause.cost} levels deep; at most ${MAX_CLAUSE_COST} are supported)`, `Use fewer nested parentheses and NOTs (at most ${MAX_FILTER_DEPTH} levels), or fewer conditions.`);
  }
  return clause.sql;
}
