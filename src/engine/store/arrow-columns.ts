/**
 * LanceDB's query results (Arrow tables) read into plain values, column by column: a row proxy or a
 * BigInt per row cost more than the rest of reading a large result.
 */
import type { ArrowTable, ArrowVector } from "./lancedb.js";

/**
 * A query result's rows as plain objects, read column by column. Arrow's row proxies (what a
 * query's `toArray()` gives) cost about 2 µs a row: 19 ms for the 7,300 matches of a lexical query
 * at 100,000 objects, against 3 ms this way.
 */
export function plainRows(data: ArrowTable): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = new Array(data.numRows);
  for (let i = 0; i < data.numRows; i++) rows[i] = {};
  for (const field of data.schema.fields) {
    const column = data.getChild(field.name);
    if (!column) continue;
    // (a column's iterator walks its chunks in order; `get(i)` looks the chunk up each time)
    let i = 0;
    for (const value of column) (rows[i++] as Record<string, unknown>)[field.name] = value;
  }
  return rows;
}

/**
 * LanceDB row ids of an Arrow `_rowid` column (unsigned 64-bit) as numbers, read from its bytes: a
 * BigInt per row cost more than the rest of reading a 10,000-row result.
 */
export function rowNumbers(column: ArrowVector | null, count: number): Float64Array {
  const out = new Float64Array(count);
  let i = 0;
  for (const chunk of column?.data ?? []) {
    const values = chunk.values as BigUint64Array;
    const view = new DataView(values.buffer, values.byteOffset, chunk.length * 8);
    for (let k = 0; k < chunk.length; k++) out[i++] = view.getUint32(k * 8 + 4, true) * 2 ** 32 + view.getUint32(k * 8, true);
  }
  return out;
}

/** A float column as doubles. */
export function numbers(column: ArrowVector | null, count: number): Float64Array {
  const out = new Float64Array(count);
  let i = 0;
  for (const chunk of column?.data ?? []) {
    const values = chunk.values as Float32Array | Float64Array;
    for (let k = 0; k < chunk.length; k++) out[i++] = values[k] as number;
  }
  return out;
}

/** A string column's values. */
export function strings(column: ArrowVector | null, count: number): string[] {
  const out = new Array<string>(count);
  let i = 0;
  for (const value of column ?? []) out[i++] = String(value);
  return out;
}

/** The dimension of a table's `vector` column (a fixed-size list), 0 when it has none. */
export function vectorDimension(schema: ArrowTable["schema"]): number {
  return (schema.fields.find((field) => field.name === "vector")?.type as { listSize?: number } | undefined)?.listSize ?? 0;
}
