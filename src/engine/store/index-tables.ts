/**
 * The tables of an index that hold one row per object (`index_<idx id>`): its `id` and `seq`, the
 * searchable `text` (full-text indexed), its `vector`, and a filter column (`f_…`) per filterable
 * field. Also what every searchable table of an index shares, part tables (part-tables.ts) too: how
 * one is created, its filter columns, and rows read by id.
 */
import { InternalError } from "../errors.js";
import type { FilterColumnType, FilterRecord } from "../filter-fields.js";
import { ftsParams, type Tokenizer } from "../tokenizer.js";
import { plainRows } from "./arrow-columns.js";
import type { Database, Tables } from "./database.js";
import { idChunks, sqlIn } from "./sql.js";

/** Values of filter columns (`f_…`, lists in `l_…`) by column name; a column left out is null. */
export type { FilterColumnType, FilterRecord };

export interface IndexRow {
  id: string;
  seq: number;
  text: string;
  vector: Float32Array;
  filters?: FilterRecord;
}

/** Filter columns: `f_<hex>` for a field's scalar values, `l_<hex>` for its lists (filter-fields.ts). */
export const FILTER_COLUMN = /^[fl]_[0-9a-f]+$/;

/**
 * Creates a table with the given columns plus `text` (full-text indexed from the start with
 * `tokenizer`, so text search works from the first row; none: no full-text index) and a `vector`
 * of `dimension` floats.
 */
export async function createSearchableTable(db: Database, name: string, columns: [string, "utf8" | "float64" | "int32"][], dimension: number, tokenizer: Tokenizer | null): Promise<void> {
  const { Schema, Field, Utf8, Float64, Int32, Float32, FixedSizeList } = db.lance.arrow;
  const types = { utf8: () => new Utf8(), float64: () => new Float64(), int32: () => new Int32() };
  const schema = new Schema([
    ...columns.map(([column, type]) => new Field(column, types[type](), false)),
    new Field("text", new Utf8(), false),
    new Field("vector", new FixedSizeList(dimension, new Field("item", new Float32(), true)), false),
  ]);
  await db.checkWrite();
  const table = await db.wrap(name, `creating table ${name}`, () => db.connection.createEmptyTable(name, schema, { existOk: true }));
  await db.wrap(name, `creating the indexes of ${name}`, async () => {
    if (tokenizer) await table.createIndex("text", { config: db.lance.lancedb.Index.fts(ftsParams(tokenizer)), replace: true });
    // Rows are fetched by id lists (page objects, rescoring, highlights): a B-tree keeps that off a full scan.
    await table.createIndex("id", { config: db.lance.lancedb.Index.btree(), replace: true });
  });
  db.keep(name, table);
}

/** Creates the table of an index: one row per object. */
export function createIndexTable(db: Database, name: string, dimension: number, tokenizer: Tokenizer): Promise<void> {
  return createSearchableTable(db, name, [["id", "utf8"], ["seq", "float64"]], dimension, tokenizer);
}

/** A row's filter values for every filter column of its table (null where it has none). */
export function filterRecord(columns: ReadonlySet<string>, filters: FilterRecord | undefined): Record<string, FilterRecord[string] | null> {
  const out: Record<string, FilterRecord[string] | null> = {};
  for (const column of columns) out[column] = filters?.[column] ?? null;
  return out;
}

/** Replaces the rows of the given objects (delete + insert in one merge commit). */
export async function upsertIndexRows(db: Database, name: string, rows: readonly IndexRow[]): Promise<void> {
  if (rows.length === 0) return;
  const table = await db.writeTable(name);
  const columns = await filterColumns(db.latest, name);
  const records = rows.map((row) => ({
    id: row.id,
    seq: row.seq,
    text: row.text,
    vector: Array.from(row.vector),
    ...filterRecord(columns, row.filters),
  }));
  await db.wrap(name, `writing rows of ${name}`, async () => {
    await table.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(records);
  });
}

export async function deleteIndexRows(db: Database, name: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const table = await db.writeTable(name);
  for (const part of idChunks(ids)) await db.wrap(name, `deleting rows of ${name}`, () => table.delete(sqlIn("id", part)));
}

/** Adds the filter columns a table lacks (nullable, null in existing rows). */
export async function ensureFilterColumns(db: Database, name: string, columns: ReadonlyMap<string, FilterColumnType>): Promise<void> {
  const present = await filterColumns(db.latest, name);
  const missing = [...columns].filter(([column]) => !present.has(column));
  if (missing.length === 0) return;
  for (const [column] of missing) if (!FILTER_COLUMN.test(column)) throw new InternalError("BAD_COLUMN", `not a filter column: ${column}`);
  const table = await db.writeTable(name);
  const { Field, List, Utf8, Float64 } = db.lance.arrow;
  const scalars = missing.filter(([, type]) => !type.endsWith("[]"));
  // (SQL has no spelling of a list type that LanceDB's addColumns reads: list columns are given as Arrow fields)
  const lists = missing.filter(([, type]) => type.endsWith("[]")).map(([column, type]) => new Field(column, new List(new Field("item", type === "string[]" ? new Utf8() : new Float64(), true)), true));
  await db.wrap(name, `adding filter columns to ${name}`, async () => {
    if (scalars.length > 0) await table.addColumns(scalars.map(([column, type]) => ({ name: column, valueSql: `CAST(NULL AS ${type})` })));
    if (lists.length > 0) await table.addColumns(lists);
  });
}

/** Rows of a table, or those matching a `where` clause. */
export async function countRows(tables: Tables, name: string, where?: string): Promise<number> {
  const table = await tables.table(name);
  return tables.wrap(name, `counting rows of ${name}`, () => table.countRows(where));
}

/** The filter columns (`f_…` and `l_…`) a table has. */
export async function filterColumns(tables: Tables, name: string): Promise<Set<string>> {
  const table = await tables.table(name);
  const schema = await tables.wrap(name, `reading the schema of ${name}`, () => table.schema());
  return new Set(schema.fields.map((field) => field.name).filter((column) => FILTER_COLUMN.test(column)));
}

/** Which of `ids` have a row in the index table. */
export function presentIds(tables: Tables, name: string, ids: readonly string[]): Promise<Set<string>> {
  return presentValues(tables, name, "id", ids);
}

/** Which of `values` occur in a column of a table (read in chunks of ids). */
export async function presentValues(tables: Tables, name: string, column: "id" | "object_id", values: readonly string[]): Promise<Set<string>> {
  const table = await tables.table(name);
  const out = new Set<string>();
  for (const part of idChunks(values)) {
    const rows = await tables.wrap(name, `reading ${name}`, () => table.query().where(sqlIn(column, part)).select([column]).toArrow().then(plainRows));
    for (const row of rows) out.add(String(row[column]));
  }
  return out;
}

/** The ids of the rows matching a `where` clause (loads them all). */
export async function idsWhere(tables: Tables, name: string, where: string): Promise<string[]> {
  const table = await tables.table(name);
  const rows = await tables.wrap(name, `reading ${name}`, () => table.query().where(where).select(["id"]).toArrow().then(plainRows));
  return rows.map((row) => String(row.id));
}

/** The searchable text of rows, by id. */
export async function texts(tables: Tables, name: string, ids: readonly string[]): Promise<Map<string, string>> {
  const table = await tables.table(name);
  const out = new Map<string, string>();
  for (const part of idChunks(ids)) {
    const rows = await tables.wrap(name, `reading ${name}`, () =>
      table.query().where(sqlIn("id", part)).select(["id", "text"]).toArrow().then(plainRows),
    );
    for (const row of rows) out.set(String(row.id), String(row.text));
  }
  return out;
}

/** Every row's id, duplicates kept (for checks and tests; loads the whole column). */
export async function rowIds(tables: Tables, name: string, where?: string): Promise<string[]> {
  const table = await tables.table(name);
  const rows = await tables.wrap(name, `reading ids of ${name}`, () => {
    const query = table.query();
    return (where === undefined ? query : query.where(where)).select(["id"]).toArrow().then(plainRows);
  });
  return rows.map((row) => String(row.id));
}

/** Every row's vector, by id (for evaluation tools; loads the whole column). */
export async function allVectors(tables: Tables, name: string): Promise<Map<string, Float32Array>> {
  const table = await tables.table(name);
  const rows = await tables.wrap(name, `reading vectors of ${name}`, () => table.query().select(["id", "vector"]).toArrow().then(plainRows));
  return new Map(rows.map((row) => [String(row.id), Float32Array.from(row.vector as ArrayLike<number>)]));
}
