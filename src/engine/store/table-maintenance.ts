/**
 * The indexes LanceDB keeps on the searchable tables of an index: scalar indexes of filter columns,
 * the approximate vector index (built once a table is large enough, prewarmed before a cold query),
 * compaction; and what they are, for status and benchmarks.
 */
import { plainRows } from "./arrow-columns.js";
import type { Database, Tables } from "./database.js";
import { FILTER_COLUMN } from "./index-tables.js";
import type { Table } from "./lancedb.js";

/**
 * Rows below which vector search stays exact (brute force) instead of using an ANN index. A scan
 * of 10,000 512-dimension vectors takes LanceDB about 28 ms here, 45,000 about 170 ms; an HNSW
 * graph answers in about 2 ms, with 99.6% of the exact 250 nearest found (bundled model, 10,000
 * bench objects: .cache/prof measurements in the README), and builds in about a second.
 */
export const VECTOR_INDEX_MIN_ROWS = 5_000;
/** Rows per HNSW graph (IVF partition): one graph up to here, so the search stays one graph walk. */
const ROWS_PER_HNSW_GRAPH = 250_000;
/** Distinct values up to which a filter column gets a bitmap index rather than a B-tree. */
export const BITMAP_MAX_DISTINCT = 1000;
/** Rows read to count a text column's distinct values. */
const CARDINALITY_SAMPLE = 200_000;

/**
 * Gives new filter columns their scalar indexes, folds new rows into every index, then compacts.
 * Search works throughout: unindexed rows are searched flat.
 */
export async function optimizeIndexTable(db: Database, name: string): Promise<void> {
  const table = await db.writeTable(name);
  await db.wrap(name, `optimizing ${name}`, async () => {
    const indices = await table.listIndices();
    // Filter columns: bitmaps suit text with few distinct values (categories), B-trees the rest;
    // this LanceDB builds bitmaps on text only. A bitmap column that outgrows it becomes a B-tree.
    // Lists of text get a label-list index (it answers array_has_any); this LanceDB has none for
    // lists of numbers, which are read in full.
    const { btree, bitmap, labelList } = db.lance.lancedb.Index;
    const { DataType } = db.lance.arrow;
    for (const field of (await table.schema()).fields) {
      const column = field.name;
      const existing = indices.find((index) => index.columns.includes(column))?.indexType;
      if (!FILTER_COLUMN.test(column) || (existing !== undefined && existing !== "Bitmap")) continue;
      if (DataType.isList(field.type)) {
        if (existing === undefined && DataType.isUtf8(field.type.children[0]?.type)) await table.createIndex(column, { config: labelList() });
      } else if (!DataType.isUtf8(field.type)) {
        await table.createIndex(column, { config: btree() });
      } else if (await distinctAtMost(table, column, BITMAP_MAX_DISTINCT)) {
        if (existing === undefined) await table.createIndex(column, { config: bitmap() });
      } else {
        await table.createIndex(column, { config: btree(), replace: true });
      }
    }
    await table.optimize({ cleanupOlderThan: new Date(Date.now() - 60_000) });
  });
}

/** Whether a column has at most `max` distinct values among (a sample of) its rows. */
async function distinctAtMost(table: Table, column: string, max: number): Promise<boolean> {
  const rows = await table.query().select([column]).limit(CARDINALITY_SAMPLE).toArrow().then(plainRows);
  const seen = new Set<unknown>();
  for (const row of rows) {
    seen.add(row[column]);
    if (seen.size > max) return false;
  }
  return true;
}

/**
 * Builds the approximate vector index once a table reaches VECTOR_INDEX_MIN_ROWS rows; true when
 * it built one. Training takes a minute or more at 100,000 rows, so callers run it without the
 * write lock: LanceDB commits an index build alongside concurrent appends and deletes.
 */
export async function buildVectorIndexIfDue(db: Database, name: string): Promise<boolean> {
  const table = await db.writeTable(name);
  return db.wrap(name, `building the vector index of ${name}`, async () => {
    const rows = await table.countRows();
    if (rows < VECTOR_INDEX_MIN_ROWS || (await table.listIndices()).some((index) => index.columns.includes("vector"))) return false;
    await table.createIndex("vector", {
      config: db.lance.lancedb.Index.hnswSq({ distanceType: "cosine", numPartitions: Math.ceil(rows / ROWS_PER_HNSW_GRAPH) }),
    });
    return true;
  });
}

/**
 * Loads a table's vector index into memory ahead of its first query (a cold process, while the
 * query's vector is still being computed); nothing when the table has none.
 */
export async function prewarmVectorIndex(tables: Tables, name: string): Promise<void> {
  // Once per table and process: the pages of `--all` are searches of their own.
  const { prewarmed } = tables.db;
  if (prewarmed.has(name)) return;
  prewarmed.add(name);
  try {
    const table = await tables.table(name);
    const indices = await tables.wrap(name, `listing the indexes of ${name}`, () => table.listIndices());
    const index = indices.find((candidate) => candidate.columns.includes("vector"));
    if (index) await tables.wrap(name, `loading the vector index of ${name}`, () => table.prewarmIndex(index.name));
  } catch (error) {
    prewarmed.delete(name); // (a failure is tried again by the next search, not remembered as done)
    throw error;
  }
}

/** The scalar index type of each indexed filter column (for status and benchmarks). */
export async function filterIndexes(tables: Tables, name: string): Promise<Map<string, string>> {
  const table = await tables.table(name);
  const indices = await tables.wrap(name, `listing the indexes of ${name}`, () => table.listIndices());
  return new Map(indices.filter((index) => FILTER_COLUMN.test(index.columns[0] ?? "")).map((index) => [index.columns[0] as string, index.indexType]));
}

/** The type of a table's approximate vector index (e.g. `IVF_HNSW_SQ`), or null when it has none. */
export async function vectorIndexType(tables: Tables, name: string): Promise<string | null> {
  const table = await tables.table(name);
  const indices = await tables.wrap(name, `listing the indexes of ${name}`, () => table.listIndices());
  return indices.find((index) => index.columns.includes("vector"))?.indexType ?? null;
}
