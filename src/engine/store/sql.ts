/**
 * The only place that turns values into LanceDB (DataFusion SQL) literals.
 * Every value that reaches a `where` string passes through here; identifiers are
 * never built from user input.
 */

/** A SQL string literal: single quotes doubled, NUL rejected. */
export function sqlString(value: string): string {
  if (value.includes("\u0000")) throw new RangeError("a NUL character cannot appear in a SQL string literal");
  return `'${value.replaceAll("'", "''")}'`;
}

/** A finite number literal. */
export function sqlNumber(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`);
  return String(value);
}

/** `column IN ('a', 'b')` for a fixed column name and a non-empty list of strings. */
export function sqlIn(column: "id" | "object_id", values: readonly string[]): string {
  if (values.length === 0) throw new RangeError("sqlIn needs at least one value");
  return `${column} IN (${values.map(sqlString).join(", ")})`;
}

/** Values per `IN (...)` list. */
const ID_CHUNK = 500;

/** `values` in lists of ID_CHUNK, one `IN (...)` query each. */
export function idChunks<T>(values: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += ID_CHUNK) out.push(values.slice(i, i + ID_CHUNK));
  return out;
}
