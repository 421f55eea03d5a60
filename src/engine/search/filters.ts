/**
 * Compiling a parsed filter to a LanceDB `where` clause. Pure.
 *
 * Column names come from the resolver (derived names, checked here again), every literal is
 * read as its field's declared type and written by store/sql.ts, so no part of the filter text
 * reaches the clause except through an escaped literal. Conditions are false for objects without
 * a value (`field IS NOT NULL AND …`), so NOT means "everything else", objects without the field included.
 */
import type { FieldType } from "../config.js";
import { readLiteral, storedValue, type FieldValue } from "../field-types.js";
import { sqlNumber, sqlString } from "../store/sql.js";
import { filterError, type FieldRef, type FilterNode, type Literal } from "./filter-syntax.js";

/** What a filter field refers to in an index. */
export type ResolvedField =
  /** a stored column */
  | { kind: "column"; column: string; type: FieldType }
  /** filterable, but no object has had a value yet: matches nothing */
  | { kind: "empty"; type: FieldType }
  /** not filterable in this index */
  | { kind: "refused"; message: string; hint?: string };

export type FieldResolver = (path: string) => ResolvedField;

const COLUMN = /^f_[0-9a-f]+$/;

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

/** The `where` clause of a filter. Throws ValidationError INVALID_FILTER pointing at the column of the problem. */
export function compileFilter(node: FilterNode, resolver: FieldResolver): string {
  switch (node.kind) {
    case "and":
    case "or":
      return `(${node.items.map((item) => compileFilter(item, resolver)).join(node.kind === "and" ? " AND " : " OR ")})`;
    case "not":
      return `(NOT ${compileFilter(node.item, resolver)})`;
    default:
      break;
  }
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
  if (field.kind === "empty") return "FALSE";
  const column = field.column;
  return `(${[`${column} IS NOT NULL`, ...parts.map((part) => `${column} ${part}`)].join(" AND ")})`;
}
