/**
 * The object table (`objects`): every object as given (`body`, JSON text), its `id`, a write
 * sequence number `seq` (monotonic across the project), its timestamps and `base`. Created with the
 * project's first object and never dropped; index rows are made only from it.
 */
import { damagedTablesError } from "./damage.js";
import { lostTables } from "./damage-check.js";
import { plainRows } from "./arrow-columns.js";
import type { Database, Tables } from "./database.js";
import { countRows } from "./index-tables.js";
import type { Table } from "./lancedb.js";
import { idChunks, sqlIn, sqlNumber } from "./sql.js";

export const OBJECTS_TABLE = "objects";

export interface ObjectRow {
  id: string;
  body: string;
  seq: number;
  created_at: string;
  updated_at: string;
  /**
   * The absolute directory relative image paths in the object are resolved against: the directory of
   * the file it was added from, or the working directory for standard input. Null in objects stored
   * before it was recorded.
   */
  base?: string | null;
}

function toObjectRow(row: Record<string, unknown>): ObjectRow {
  return {
    id: String(row.id),
    body: String(row.body),
    seq: Number(row.seq),
    created_at: String(row.created_at),
    updated_at: String(row.updated_at),
    base: typeof row.base === "string" ? row.base : null,
  };
}

/** The object table as `tables` reads it, or null when it does not exist (and was not lost). */
async function objectsTable(tables: Tables): Promise<Table | null> {
  if (tables.db.isOpen(OBJECTS_TABLE)) return tables.table(OBJECTS_TABLE);
  const names = await tables.db.tableNames();
  if (names.includes(OBJECTS_TABLE)) return tables.table(OBJECTS_TABLE);
  await checkObjectsNotLost(tables, names);
  return null;
}

/**
 * The object table, once created, is never dropped, and index rows are made only from it: missing
 * while an index table holds rows, it was lost (CORRUPT_TABLE), and the project must not be read as
 * empty, nor a new object table created in its place. So is a database missing tables the catalog
 * lists (a data/ folder removed or replaced): an index's tables are created with it.
 */
async function checkObjectsNotLost(tables: Tables, names: readonly string[]): Promise<void> {
  const lost = await tables.wrap(null, "listing tables", () => lostTables(tables.db, names));
  if (lost.length > 0) throw damagedTablesError(tables.db.dir, lost.map((name) => ({ name, expectedBecause: "catalog.json lists it" })));
  for (const name of names.filter((candidate) => /^index_idx_[a-z0-9]+$/.test(candidate))) {
    const rows = await countRows(tables, name);
    if (rows > 0) throw damagedTablesError(tables.db.dir, [{ name: OBJECTS_TABLE, expectedBecause: `${name} holds rows of ${rows} objects` }]);
  }
}

/** The object table's current version (0 before it exists). */
export async function objectsVersion(tables: Tables): Promise<number> {
  const table = await objectsTable(tables);
  return table ? tables.wrap(OBJECTS_TABLE, "reading the object table's version", () => table.version()) : 0;
}

/**
 * Whether the object table has this version to go back to. Version 0 means the table did not exist
 * when the add began (`since`, ms): then its first version must be younger than that.
 */
export async function hasObjectsVersion(tables: Tables, version: number, since: number): Promise<boolean> {
  const table = await objectsTable(tables);
  if (!table) return version === 0;
  const versions = await tables.wrap(OBJECTS_TABLE, "listing the object table's versions", () => table.listVersions());
  if (version !== 0) return versions.some((entry) => entry.version === version);
  const first = Math.min(...versions.map((entry) => new Date(entry.timestamp).getTime()));
  return first >= since - 1000;
}

/** The highest sequence number in the object table (0 when it is empty). */
export async function maxSeq(tables: Tables): Promise<number> {
  const table = await objectsTable(tables);
  if (!table) return 0;
  const rows = await tables.wrap(OBJECTS_TABLE, "reading the highest sequence number", () =>
    table.query().select(["seq"]).orderBy({ columnName: "seq", ascending: false }).limit(1).toArrow().then(plainRows),
  );
  return rows.length > 0 ? Number(rows[0]?.seq) : 0;
}

/** The creation time of those of `ids` that are stored (reads no bodies). */
export async function createdAt(tables: Tables, ids: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const table = await objectsTable(tables);
  if (!table || ids.length === 0 || (await tables.wrap(OBJECTS_TABLE, "counting objects", () => table.countRows())) === 0) return out;
  for (const part of idChunks(ids)) {
    const rows = await tables.wrap(OBJECTS_TABLE, "reading objects", () => table.query().where(sqlIn("id", part)).select(["id", "created_at"]).toArrow().then(plainRows));
    for (const row of rows) out.set(String(row.id), String(row.created_at));
  }
  return out;
}

export async function getObjects(tables: Tables, ids: readonly string[]): Promise<Map<string, ObjectRow>> {
  const out = new Map<string, ObjectRow>();
  const table = await objectsTable(tables);
  if (!table || ids.length === 0) return out;
  for (const part of idChunks([...new Set(ids)])) {
    const rows = await tables.wrap(OBJECTS_TABLE, "reading objects", () => table.query().where(sqlIn("id", part)).toArrow().then(plainRows));
    for (const row of rows) out.set(String(row.id), toObjectRow(row));
  }
  return out;
}

/** Up to `limit` objects, in no particular order (the first ones stored): a cheap sample. */
export async function sampleObjects(tables: Tables, limit: number): Promise<ObjectRow[]> {
  const table = await objectsTable(tables);
  if (!table) return [];
  return (await tables.wrap(OBJECTS_TABLE, "reading objects", () => table.query().limit(limit).toArrow().then(plainRows))).map(toObjectRow);
}

/** Objects in id order, for listing. */
export async function listObjects(tables: Tables, offset: number, limit: number): Promise<ObjectRow[]> {
  const table = await objectsTable(tables);
  if (!table) return [];
  const rows = await tables.wrap(OBJECTS_TABLE, "listing objects", () =>
    table.query().orderBy({ columnName: "id", ascending: true }).offset(offset).limit(limit).toArrow().then(plainRows),
  );
  return rows.map(toObjectRow);
}

/** Objects written after `seq`, oldest first. */
export async function objectsAfter(tables: Tables, seq: number, limit: number): Promise<ObjectRow[]> {
  const table = await objectsTable(tables);
  if (!table) return [];
  const rows = await tables.wrap(OBJECTS_TABLE, "reading pending objects", () =>
    table
      .query()
      .where(`seq > ${sqlNumber(seq)}`)
      .orderBy({ columnName: "seq", ascending: true })
      .limit(limit)
      .toArrow().then(plainRows),
  );
  return rows.map(toObjectRow);
}

/** Objects with `seq` in `(above, atMost]`. */
export async function countObjects(tables: Tables, above = -1, atMost = Infinity): Promise<number> {
  const table = await objectsTable(tables);
  if (!table) return 0;
  const parts = [`seq > ${sqlNumber(above)}`];
  if (atMost !== Infinity) parts.push(`seq <= ${sqlNumber(atMost)}`);
  return tables.wrap(OBJECTS_TABLE, "counting objects", () => table.countRows(parts.join(" AND ")));
}

/** Of the objects `ids` names, those with `seq` in `(above, atMost]` (read in chunks of ids). */
export async function countObjectsAmong(tables: Tables, ids: readonly string[], above = -1, atMost = Infinity): Promise<number> {
  const table = await objectsTable(tables);
  if (!table || ids.length === 0) return 0;
  const range = [`seq > ${sqlNumber(above)}`, ...(atMost === Infinity ? [] : [`seq <= ${sqlNumber(atMost)}`])].join(" AND ");
  let count = 0;
  for (const part of idChunks([...new Set(ids)])) {
    count += await tables.wrap(OBJECTS_TABLE, "counting objects", () => table.countRows(`${sqlIn("id", part)} AND ${range}`));
  }
  return count;
}

/** The ids of the objects written after `seq` (loads them all). */
export async function objectIdsAfter(tables: Tables, seq: number): Promise<string[]> {
  const table = await objectsTable(tables);
  if (!table) return [];
  const rows = await tables.wrap(OBJECTS_TABLE, "reading pending objects", () => table.query().where(`seq > ${sqlNumber(seq)}`).select(["id"]).toArrow().then(plainRows));
  return rows.map((row) => String(row.id));
}

/** Every stored object's id (loads the whole column). */
export async function objectIds(tables: Tables): Promise<string[]> {
  const table = await objectsTable(tables);
  if (!table) return [];
  return (await tables.wrap(OBJECTS_TABLE, "reading object ids", () => table.query().select(["id"]).toArrow().then(plainRows))).map((row) => String(row.id));
}

/** The writes to the object table: at its latest version, through the store only. */
export class ObjectTableWrites {
  /** Whether the table is known to have every column (see ensure). */
  private migrated = false;

  constructor(private readonly db: Database) {}

  /** The object table, created when there is none. */
  private async ensure(): Promise<Table> {
    const { db } = this;
    const existing = (await objectsTable(db.latest)) && (await db.writeTable(OBJECTS_TABLE));
    if (existing) {
      // Object tables written before `base` was recorded get the column (null in their rows).
      if (!this.migrated) {
        const schema = await db.wrap(OBJECTS_TABLE, "reading the object table's schema", () => existing.schema());
        if (!schema.fields.some((field) => field.name === "base")) {
          await db.wrap(OBJECTS_TABLE, "adding a column to the object table", () => existing.addColumns([{ name: "base", valueSql: "CAST(NULL AS string)" }]));
        }
        this.migrated = true;
      }
      return existing;
    }
    const { Schema, Field, Utf8, Float64 } = db.lance.arrow;
    const schema = new Schema([
      new Field("id", new Utf8(), false),
      new Field("body", new Utf8(), false),
      new Field("seq", new Float64(), false),
      new Field("created_at", new Utf8(), false),
      new Field("updated_at", new Utf8(), false),
      new Field("base", new Utf8(), true),
    ]);
    await db.checkWrite();
    const table = await db.wrap(OBJECTS_TABLE, "creating the object store", async () => {
      const created = await db.connection.createEmptyTable(OBJECTS_TABLE, schema, { existOk: true });
      await created.createIndex("id", { config: db.lance.lancedb.Index.btree(), replace: true });
      return created;
    });
    db.keep(OBJECTS_TABLE, table);
    this.migrated = true;
    return table;
  }

  /** Inserts or replaces objects by id, in one commit: all of them or none. */
  async upsert(rows: readonly ObjectRow[]): Promise<void> {
    if (rows.length === 0) return;
    const table = await this.ensure();
    await this.db.wrap(OBJECTS_TABLE, "writing objects", async () => {
      await table.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(rows.map((row) => ({ ...row, base: row.base ?? null })));
    });
  }

  /** Appends objects whose ids are not in the table yet (the caller knows), in one commit. */
  async append(rows: readonly ObjectRow[]): Promise<void> {
    if (rows.length === 0) return;
    const table = await this.ensure();
    await this.db.wrap(OBJECTS_TABLE, "writing objects", async () => {
      await table.add(rows.map((row) => ({ ...row, base: row.base ?? null })));
    });
  }

  /**
   * Makes `version` the object table's latest version again (a new commit with that content),
   * undoing every commit after it. Version 0: the table did not exist, so every row is removed.
   */
  async restore(version: number): Promise<void> {
    if (!(await objectsTable(this.db.latest))) return;
    const table = await this.db.writeTable(OBJECTS_TABLE);
    // An older version may predate the `base` column.
    this.migrated = false;
    await this.db.wrap(OBJECTS_TABLE, "rolling back the object table", async () => {
      if (version === 0) {
        await table.delete("true");
        return;
      }
      if ((await table.version()) === version) return;
      await table.checkout(version);
      await table.restore();
    });
  }

  async delete(ids: readonly string[]): Promise<void> {
    if (ids.length === 0 || !(await objectsTable(this.db.latest))) return;
    const table = await this.db.writeTable(OBJECTS_TABLE);
    for (const part of idChunks(ids)) await this.db.wrap(OBJECTS_TABLE, "deleting objects", () => table.delete(sqlIn("id", part)));
  }

  /** Compacts the object table's fragments and drops versions older than a minute. */
  async optimize(): Promise<void> {
    if (!(await objectsTable(this.db.latest))) return;
    const table = await this.db.writeTable(OBJECTS_TABLE);
    await this.db.wrap(OBJECTS_TABLE, "compacting the object table", async () => {
      await table.optimize({ cleanupOlderThan: new Date(Date.now() - 60_000) });
    });
  }
}
