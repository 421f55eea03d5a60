/**
 * Compiling a parsed filter to a LanceDB `where` clause. Pure.
 *
 * Column names come from the resolver (derived names, checked here again), every literal is
 * read as its field's declared type and written by store/sql.ts, so no part of the filter text
 * reaches the clause except through an escaped literal. Conditions are false for objects without
 * a value (`field IS NOT NULL AND …`), so NOT means "everything else", objects without the field included.
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
import { filterError, MAX_FILTER_DEPTH, type FieldRef, type FilterNode, type Literal } from "./filter-syntax.js";

/** What a filter field refers to in an index. */
export type ResolvedField =
  /** a stored column */
  | { kind: "column"; column: string; type: FieldType }
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
/** Most parser recursion a clause may need (47 parses; the rest is a margin). */
export const MAX_CLAUSE_COST = 40;

const COLUMN = /^f_[0-9a-f]+$/;

/** A compiled condition; an equality match keeps its column and value for merging into `IN` lists. */
type Part = Clause & { match?: { column: string; value: string } };

function literal(type: FieldType, value: Literal, field: FieldRef): string {
  const reading = readLiteral(type, value.text);
  if (!reading.ok) throw filterError(value.column, `"${field.path}" is a ${type} field: ${reading.message}`);
  return sqlValue(reading.value, value);
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
  if (resolved.kind === "column" && !COLUMN.test(resolved.column)) throw new Error(`not a filter column: ${resolved.column}`);
  return resolved;
}

function noRangeOnBool(type: FieldType, field: FieldRef, what: string): void {
  if (type === "bool") throw filterError(field.column, `"${field.path}" is a bool field: ${what} needs an int, float, datetime or string field`, `Write ${field.path}:true or ${field.path}:false.`);
}

function condition(node: Extract<FilterNode, { field: FieldRef }>, resolver: FieldResolver): Part {
  const field = resolve(resolver, node.field);
  const parts: string[] = [];
  switch (node.kind) {
    case "exists":
      break;
    case "match":
      parts.push(`= ${literal(field.type, node.value, node.field)}`);
      break;
    case "compare":
      noRangeOnBool(field.type, node.field, `"${node.op}"`);
      parts.push(`${node.op} ${literal(field.type, node.value, node.field)}`);
      break;
    case "range":
      noRangeOnBool(field.type, node.field, "a range");
      if (node.lower) parts.push(`${node.lower.inclusive ? ">=" : ">"} ${literal(field.type, node.lower.value, node.field)}`);
      if (node.upper) parts.push(`${node.upper.inclusive ? "<=" : "<"} ${literal(field.type, node.upper.value, node.field)}`);
      break;
  }
  const at = node.field.column;
  if (field.kind === "empty") return { sql: "FALSE", cost: 0, column: at };
  const column = field.column;
  const sql = `(${[`${column} IS NOT NULL`, ...parts.map((part) => `${column} ${part}`)].join(" AND ")})`;
  const match = node.kind === "match" ? { column, value: (parts[0] as string).slice(2) } : undefined;
  return { sql, cost: CONDITION_COST, column: at, match };
}

/** The operands of an AND or OR, with nested ANDs in an AND (ORs in an OR) lifted into it. */
function operands(node: Extract<FilterNode, { items: FilterNode[] }>): FilterNode[] {
  return node.items.flatMap((item) => (item.kind === node.kind ? operands(item) : [item]));
}

/** OR-ed equality matches of one column as one `column IN (…)` condition, where the first of them was. */
function mergeMatches(parts: Part[]): Part[] {
  const values = new Map<string, string[]>();
  for (const { match } of parts) if (match) values.set(match.column, [...(values.get(match.column) ?? []), match.value]);
  const out: Part[] = [];
  for (const part of parts) {
    const list = part.match ? values.get(part.match.column) : undefined;
    if (!part.match || list?.length === 1) {
      out.push(part);
      continue;
    }
    if (list === undefined) continue; // in the list of the column's first match
    const column = part.match.column;
    out.push({ sql: `(${column} IS NOT NULL AND ${column} IN (${list.join(", ")}))`, cost: CONDITION_COST, column: part.column });
    values.delete(column);
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

function compile(node: FilterNode, resolver: FieldResolver): Part {
  switch (node.kind) {
    case "and":
      return join("AND", operands(node).map((item) => compile(item, resolver)));
    case "or":
      return join("OR", mergeMatches(operands(node).map((item) => compile(item, resolver))));
    case "not": {
      const item = compile(node.item, resolver);
      return { sql: `NOT ${item.sql}`, cost: item.cost + 1, column: item.column };
    }
    default:
      return condition(node, resolver);
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
