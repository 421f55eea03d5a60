/**
 * The LanceDB store: the object table and the tables of indexes, read and written (a snapshot, the
 * same class, reads them at pinned versions). LanceDB itself is loaded by lancedb.ts; a failure is
 * checked for damage by damage-check.ts.
 *
 * Tables of a project database:
 * - `objects`: every object as given (`body`, JSON text), its `id`, a write sequence
 *   number `seq` (monotonic across the project) and its timestamps;
 * - `index_<idx id>`: one row per object of one index, with the searchable `text`
 *   (full-text indexed) and its `vector`.
 */
import { InternalError, SemsearchError } from "../errors.js";
import { damagedTablesError } from "./damage.js";
import { findDamage, lostTables, type CheckedDatabase } from "./damage-check.js";
import type { FilterRecord } from "../filter-fields.js";
import { numbers, plainRows, rowNumbers, strings } from "./arrow-columns.js";
import { loadLance, wrap, type ArrowTable, type Connection, type Lance, type Table } from "./lancedb.js";
import { idChunks, sqlIn, sqlNumber } from "./sql.js";
import { byScore, cosines, NO_ROWS, reorderRows, RowIndex, squaredNorm, type RowVectors, type ScoredRows } from "./rows.js";
import { VectorCache, type HeldVectors } from "./vector-cache.js";

export const OBJECTS_TABLE = "objects";

export interface StoreOptions {
  /** how much of tables' vectors a long-running process may hold in memory for the rescoring (vector-cache.ts); none by default */
  vectorCacheBytes?: number;
  /**
   * The tables the project's records (its catalog) say exist: one of them missing from the database
   * is reported as damage (CORRUPT_TABLE) when an operation fails, rather than as a bug.
   */
  expectedTables?: () => readonly string[];
}
/**
 * Rows below which vector search stays exact (brute force) instead of using an ANN index. A scan
 * of 10,000 512-dimension vectors takes LanceDB about 28 ms here, 45,000 about 170 ms; an HNSW
 * graph answers in about 2 ms, with 99.6% of the exact 250 nearest found (bundled model, 10,000
 * bench objects: .cache/prof measurements in the README), and builds in about a second.
 */
export const VECTOR_INDEX_MIN_ROWS = 5_000;
/** Rows per HNSW graph (IVF partition): one graph up to here, so the search stays one graph walk. */
const ROWS_PER_HNSW_GRAPH = 250_000;

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

/** Values of filter columns (`f_…`) by column name; a column left out is null. */
export type { FilterRecord };

export interface IndexRow {
  id: string;
  seq: number;
  text: string;
  vector: Float32Array;
  filters?: FilterRecord;
}

/**
 * Storage types of filter columns. Booleans are stored as 1/0 doubles: apache-arrow 18 writes an
 * all-null boolean column with no validity bitmap, which LanceDB rejects.
 */
export type FilterColumnType = "string" | "double";

/** Distinct values up to which a filter column gets a bitmap index rather than a B-tree. */
export const BITMAP_MAX_DISTINCT = 1000;
/** Rows read to count a text column's distinct values. */
const CARDINALITY_SAMPLE = 200_000;

/** One highlight segment of one field of one object. `id` is the JSON text of `[object id, field, position]`. */
export interface SegmentRow {
  id: string;
  object_id: string;
  seq: number;
  field: string;
  position: number;
  start_char: number;
  end_char: number;
  text: string;
  vector: Float32Array;
  filters?: FilterRecord;
}

export type SegmentInfo = Omit<SegmentRow, "vector" | "text" | "seq" | "filters">;

/** A scored row of a part table: which object, field and place it is, its text (an image's reference), its score. */
export interface PartScore {
  id: string;
  object_id: string;
  field: string;
  position: number;
  text: string;
  score: number;
}

function toPartScore(row: Record<string, unknown>): PartScore {
  return { id: String(row.id), object_id: String(row.object_id), field: String(row.field), position: Number(row.position), text: String(row.text), score: 1 - Number(row._distance) };
}

const FILTER_COLUMN = /^f_[0-9a-f]+$/;

export type { ScoredRows, RowVectors } from "./rows.js";

/** Table handles checked out at one version each, shared by the snapshots of one store. */
type PinnedHandles = Map<string, { version: number; table: Promise<Table> }>;

/**
 * Where the first `n` of `rows` (row ids of one snapshot) are among held vectors of the same version,
 * or null when one is not there, or (given `ids`) holds another id: then the rows are read instead.
 */
function heldPositions(held: HeldVectors, rows: Float64Array, n: number, ids?: readonly string[]): Int32Array | null {
  const positions = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const at = held.rows.get(rows[i] as number);
    if (at < 0 || (ids && held.ids[at] !== ids[i])) return null;
    positions[i] = at;
  }
  return positions;
}

/** Bytes a held row takes: its vector and the sum of its squares. */
function heldRowBytes(dimension: number): number {
  return dimension * 4 + 8;
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

/** A row's filter values for every filter column of its table (null where it has none). */
function filterRecord(columns: ReadonlySet<string>, filters: FilterRecord | undefined): Record<string, string | number | null> {
  const out: Record<string, string | number | null> = {};
  for (const column of columns) out[column] = filters?.[column] ?? null;
  return out;
}

export class LanceStore {
  private readonly tables = new Map<string, Table>();
  /** Of a snapshot: each table as pinned at its first use. */
  private readonly pinnedHere = new Map<string, Promise<Table>>();
  /** Of the store itself: tables whose vector index this process has prewarmed (see prewarmVectorIndex). */
  private readonly prewarmed = new Set<string>();
  /** Of a snapshot: tables whose use it has counted towards holding their vectors. */
  private readonly usesCounted = new Set<string>();
  /** Of a snapshot: the version each table is pinned at. */
  private readonly pinnedVersions = new Map<string, number>();
  /** Of the store itself: tables' vectors held in memory (see vector-cache.ts); null when not wanted. */
  private vectorCache: VectorCache | null = null;
  /** Of the store itself: loads of vectors under way. */
  private readonly vectorLoads = new Set<Promise<void>>();
  /** Of the store itself: the size of each table's vectors at the version last searched. */
  private readonly vectorSizes = new Map<string, { version: number; bytes: number }>();
  /** Of the store itself: the tables the project's records say exist (see StoreOptions.expectedTables). */
  private expectedTables: () => readonly string[] = () => [];
  /** Of the store itself: checks of the tables under way after a failure, by the table and version it was of (see damage). */
  private readonly damageChecks = new Map<string, Promise<SemsearchError | null>>();
  private closed = false;

  private constructor(
    private readonly dir: string,
    private readonly db: Connection,
    private readonly mod: Lance,
    /** The store a snapshot reads through; null for the store itself. */
    private readonly latest: LanceStore | null = null,
    private readonly pinned: PinnedHandles = new Map(),
  ) {}

  /**
   * A read-only view in which each table stays at the version it had when the view first used it:
   * every query of one search reads the same data, even while the worker commits (and compacts)
   * between them, and row ids it returns can be read again. Views are cheap: handles are shared
   * between views of the same versions, and a table's version is checked once per view.
   */
  snapshot(): LanceStore {
    return new LanceStore(this.dir, this.db, this.mod, this, this.pinned);
  }

  private pinnedTable(latest: LanceStore, name: string): Promise<Table> {
    let table = this.pinnedHere.get(name);
    if (!table) {
      table = (async () => {
        const version = await latest.wrap(name, `reading the version of ${name}`, async () => (await latest.table(name)).version());
        this.pinnedVersions.set(name, version);
        const known = this.pinned.get(name);
        if (known?.version === version) return known.table;
        const opened = this.wrap(name, `opening table ${name}`, async () => {
          const handle = await this.db.openTable(name);
          await handle.checkout(version);
          return handle;
        });
        this.pinned.set(name, { version, table: opened });
        opened.catch(() => {
          if (this.pinned.get(name)?.table === opened) this.pinned.delete(name);
        });
        return opened;
      })();
      this.pinnedHere.set(name, table);
    }
    return table;
  }

  /**
   * Opens (creating if needed) the database in `dir`; reads always see other processes' commits.
   * @param options.vectorCacheBytes how much of tables' vectors a long-running process may hold in
   *   memory for the rescoring (vector-cache.ts); none by default
   */
  static async open(dir: string, options: StoreOptions = {}): Promise<LanceStore> {
    const mod = await loadLance();
    const db = await wrap(dir, "opening the database", () => mod.lancedb.connect(dir, { readConsistencyInterval: 0 }));
    const store = new LanceStore(dir, db, mod);
    if (options.vectorCacheBytes) store.vectorCache = new VectorCache(options.vectorCacheBytes);
    if (options.expectedTables) store.expectedTables = options.expectedTables;
    return store;
  }

  /**
   * Runs a LanceDB operation on `table` (null: on none in particular); a failure becomes a
   * SemsearchError: the machine's fault (a full disk…), a damaged table (EnvironmentError
   * CORRUPT_TABLE, see damage), else InternalError STORAGE_ERROR.
   */
  private wrap<T>(table: string | null, what: string, fn: () => Promise<T>): Promise<T> {
    return wrap(this.dir, what, fn, (error) => this.damage(error, table));
  }

  /**
   * After an operation on `touched` (null: on no table in particular) failed for no reason of the
   * machine's: whether a table of the database is damaged (CORRUPT_TABLE naming it) or missing
   * although the project says it exists; null when the failure is not the data's (a bug, or a
   * snapshot's old version cleaned up under it). LanceDB's messages are not looked at: tables are
   * read again, fresh. Concurrent failures of one table and version share one check.
   */
  private damage(cause: unknown, touched: string | null): Promise<SemsearchError | null> {
    const root = this.latest ?? this;
    if (root.closed) return Promise.resolve(null);
    const version = touched === null ? undefined : this.pinnedVersions.get(touched);
    const key = JSON.stringify([touched, version ?? null]);
    let check = root.damageChecks.get(key);
    if (!check) {
      check = findDamage(this.checked(), cause, touched, version).finally(() => root.damageChecks.delete(key));
      root.damageChecks.set(key, check);
    }
    return check;
  }

  /** What a check of the tables reads (damage-check.ts). */
  private checked(): CheckedDatabase {
    const root = this.latest ?? this;
    return {
      dir: this.dir,
      connection: this.db,
      lance: this.mod,
      expectedTables: () => root.expectedTables(),
      get closed() {
        return root.closed;
      },
    };
  }

  private async table(name: string): Promise<Table> {
    if (this.latest) return this.pinnedTable(this.latest, name);
    let table = this.tables.get(name);
    if (!table) {
      table = await this.wrap(name, `opening table ${name}`, () => this.db.openTable(name));
      this.tables.set(name, table);
    }
    return table;
  }

  async hasTable(name: string): Promise<boolean> {
    return (await this.tableNames()).includes(name);
  }

  async tableNames(): Promise<string[]> {
    return this.wrap(null, "listing tables", () => this.db.tableNames({ limit: 1_000_000 }));
  }

  private async objectsTable(): Promise<Table | null> {
    if (this.tables.has(OBJECTS_TABLE) || this.latest?.tables.has(OBJECTS_TABLE)) return this.table(OBJECTS_TABLE);
    const names = await this.tableNames();
    if (names.includes(OBJECTS_TABLE)) return this.table(OBJECTS_TABLE);
    await this.checkObjectsNotLost(names);
    return null;
  }

  /**
   * The object table, once created, is never dropped, and index rows are made only from it: missing
   * while an index table holds rows, it was lost (CORRUPT_TABLE), and the project must not be read as
   * empty, nor a new object table created in its place. So is a database missing tables the catalog
   * lists (a data/ folder removed or replaced): an index's tables are created with it.
   */
  private async checkObjectsNotLost(names: readonly string[]): Promise<void> {
    const lost = await this.wrap(null, "listing tables", () => lostTables(this.checked(), names));
    if (lost.length > 0) throw damagedTablesError(this.dir, lost.map((name) => ({ name, expectedBecause: "catalog.json lists it" })));
    for (const name of names.filter((candidate) => /^index_idx_[a-z0-9]+$/.test(candidate))) {
      const rows = await this.countRows(name);
      if (rows > 0) throw damagedTablesError(this.dir, [{ name: OBJECTS_TABLE, expectedBecause: `${name} holds rows of ${rows} objects` }]);
    }
  }

  private objectsMigrated = false;

  private async ensureObjectsTable(): Promise<Table> {
    const existing = await this.objectsTable();
    if (existing) {
      // Object tables written before `base` was recorded get the column (null in their rows).
      if (!this.objectsMigrated) {
        const schema = await this.wrap(OBJECTS_TABLE, "reading the object table's schema", () => existing.schema());
        if (!schema.fields.some((field) => field.name === "base")) {
          await this.wrap(OBJECTS_TABLE, "adding a column to the object table", () => existing.addColumns([{ name: "base", valueSql: "CAST(NULL AS string)" }]));
        }
        this.objectsMigrated = true;
      }
      return existing;
    }
    const { Schema, Field, Utf8, Float64 } = this.mod.arrow;
    const schema = new Schema([
      new Field("id", new Utf8(), false),
      new Field("body", new Utf8(), false),
      new Field("seq", new Float64(), false),
      new Field("created_at", new Utf8(), false),
      new Field("updated_at", new Utf8(), false),
      new Field("base", new Utf8(), true),
    ]);
    const table = await this.wrap(OBJECTS_TABLE, "creating the object store", async () => {
      const created = await this.db.createEmptyTable(OBJECTS_TABLE, schema, { existOk: true });
      await created.createIndex("id", { config: this.mod.lancedb.Index.btree(), replace: true });
      return created;
    });
    this.tables.set(OBJECTS_TABLE, table);
    this.objectsMigrated = true;
    return table;
  }

  /** Inserts or replaces objects by id, in one commit: all of them or none. */
  async upsertObjects(rows: readonly ObjectRow[]): Promise<void> {
    if (rows.length === 0) return;
    const table = await this.ensureObjectsTable();
    await this.wrap(OBJECTS_TABLE, "writing objects", async () => {
      await table.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(rows.map((row) => ({ ...row, base: row.base ?? null })));
    });
  }

  /** Compacts the object table's fragments and drops versions older than a minute. */
  async optimizeObjects(): Promise<void> {
    const table = await this.objectsTable();
    if (!table) return;
    await this.wrap(OBJECTS_TABLE, "compacting the object table", async () => {
      await table.optimize({ cleanupOlderThan: new Date(Date.now() - 60_000) });
    });
  }

  /** The object table's current version (0 before it exists). */
  async objectsVersion(): Promise<number> {
    const table = await this.objectsTable();
    return table ? this.wrap(OBJECTS_TABLE, "reading the object table's version", () => table.version()) : 0;
  }

  /**
   * Whether the object table has this version to go back to. Version 0 means the table did not exist
   * when the add began (`since`, ms): then its first version must be younger than that.
   */
  async hasObjectsVersion(version: number, since: number): Promise<boolean> {
    const table = await this.objectsTable();
    if (!table) return version === 0;
    const versions = await this.wrap(OBJECTS_TABLE, "listing the object table's versions", () => table.listVersions());
    if (version !== 0) return versions.some((entry) => entry.version === version);
    const first = Math.min(...versions.map((entry) => new Date(entry.timestamp).getTime()));
    return first >= since - 1000;
  }

  /** The highest sequence number in the object table (0 when it is empty). */
  async maxSeq(): Promise<number> {
    const table = await this.objectsTable();
    if (!table) return 0;
    const rows = await this.wrap(OBJECTS_TABLE, "reading the highest sequence number", () =>
      table.query().select(["seq"]).orderBy({ columnName: "seq", ascending: false }).limit(1).toArrow().then(plainRows),
    );
    return rows.length > 0 ? Number(rows[0]?.seq) : 0;
  }

  /**
   * Makes `version` the object table's latest version again (a new commit with that content),
   * undoing every commit after it. Version 0: the table did not exist, so every row is removed.
   */
  async restoreObjects(version: number): Promise<void> {
    const table = await this.objectsTable();
    if (!table) return;
    // An older version may predate the `base` column.
    this.objectsMigrated = false;
    await this.wrap(OBJECTS_TABLE, "rolling back the object table", async () => {
      if (version === 0) {
        await table.delete("true");
        return;
      }
      if ((await table.version()) === version) return;
      await table.checkout(version);
      await table.restore();
    });
  }

  /** Appends objects whose ids are not in the table yet (the caller knows), in one commit. */
  async appendObjects(rows: readonly ObjectRow[]): Promise<void> {
    if (rows.length === 0) return;
    const table = await this.ensureObjectsTable();
    await this.wrap(OBJECTS_TABLE, "writing objects", async () => {
      await table.add(rows.map((row) => ({ ...row, base: row.base ?? null })));
    });
  }

  /** The creation time of those of `ids` that are stored (reads no bodies). */
  async createdAt(ids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const table = await this.objectsTable();
    if (!table || ids.length === 0 || (await this.wrap(OBJECTS_TABLE, "counting objects", () => table.countRows())) === 0) return out;
    for (const part of idChunks(ids)) {
      const rows = await this.wrap(OBJECTS_TABLE, "reading objects", () => table.query().where(sqlIn("id", part)).select(["id", "created_at"]).toArrow().then(plainRows));
      for (const row of rows) out.set(String(row.id), String(row.created_at));
    }
    return out;
  }

  async getObjects(ids: readonly string[]): Promise<Map<string, ObjectRow>> {
    const out = new Map<string, ObjectRow>();
    const table = await this.objectsTable();
    if (!table || ids.length === 0) return out;
    for (const part of idChunks([...new Set(ids)])) {
      const rows = await this.wrap(OBJECTS_TABLE, "reading objects", () => table.query().where(sqlIn("id", part)).toArrow().then(plainRows));
      for (const row of rows) out.set(String(row.id), toObjectRow(row));
    }
    return out;
  }

  /** Up to `limit` objects, in no particular order (the first ones stored): a cheap sample. */
  async sampleObjects(limit: number): Promise<ObjectRow[]> {
    const table = await this.objectsTable();
    if (!table) return [];
    return (await this.wrap(OBJECTS_TABLE, "reading objects", () => table.query().limit(limit).toArrow().then(plainRows))).map(toObjectRow);
  }

  /** Objects in id order, for listing. */
  async listObjects(offset: number, limit: number): Promise<ObjectRow[]> {
    const table = await this.objectsTable();
    if (!table) return [];
    const rows = await this.wrap(OBJECTS_TABLE, "listing objects", () =>
      table.query().orderBy({ columnName: "id", ascending: true }).offset(offset).limit(limit).toArrow().then(plainRows),
    );
    return rows.map(toObjectRow);
  }

  /** Objects written after `seq`, oldest first. */
  async objectsAfter(seq: number, limit: number): Promise<ObjectRow[]> {
    const table = await this.objectsTable();
    if (!table) return [];
    const rows = await this.wrap(OBJECTS_TABLE, "reading pending objects", () =>
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
  async countObjects(above = -1, atMost = Infinity): Promise<number> {
    const table = await this.objectsTable();
    if (!table) return 0;
    const parts = [`seq > ${sqlNumber(above)}`];
    if (atMost !== Infinity) parts.push(`seq <= ${sqlNumber(atMost)}`);
    return this.wrap(OBJECTS_TABLE, "counting objects", () => table.countRows(parts.join(" AND ")));
  }

  async deleteObjects(ids: readonly string[]): Promise<void> {
    const table = await this.objectsTable();
    if (!table || ids.length === 0) return;
    for (const part of idChunks(ids)) await this.wrap(OBJECTS_TABLE, "deleting objects", () => table.delete(sqlIn("id", part)));
  }

  /**
   * Creates a table with the given columns plus `text` (full-text indexed from the start, so text
   * search works from the first row) and a `vector` of `dimension` floats.
   */
  private async createSearchableTable(name: string, columns: [string, "utf8" | "float64" | "int32"][], dimension: number, fullText = true): Promise<void> {
    const { Schema, Field, Utf8, Float64, Int32, Float32, FixedSizeList } = this.mod.arrow;
    const types = { utf8: () => new Utf8(), float64: () => new Float64(), int32: () => new Int32() };
    const schema = new Schema([
      ...columns.map(([column, type]) => new Field(column, types[type](), false)),
      new Field("text", new Utf8(), false),
      new Field("vector", new FixedSizeList(dimension, new Field("item", new Float32(), true)), false),
    ]);
    const table = await this.wrap(name, `creating table ${name}`, () => this.db.createEmptyTable(name, schema, { existOk: true }));
    await this.wrap(name, `creating the indexes of ${name}`, async () => {
      if (fullText) await table.createIndex("text", { config: this.mod.lancedb.Index.fts({ withPosition: false }), replace: true });
      // Rows are fetched by id lists (page objects, rescoring, highlights): a B-tree keeps that off a full scan.
      await table.createIndex("id", { config: this.mod.lancedb.Index.btree(), replace: true });
    });
    this.tables.set(name, table);
  }

  /** Creates the table of an index: one row per object. */
  createIndexTable(name: string, dimension: number): Promise<void> {
    return this.createSearchableTable(name, [["id", "utf8"], ["seq", "float64"]], dimension);
  }

  /**
   * Creates a part table of an index, one row per part of an object: highlight segments (their text
   * full-text indexed), or images (`fullText` false: their text is the image's reference, searched
   * by vector only).
   */
  createSegmentTable(name: string, dimension: number, fullText = true): Promise<void> {
    return this.createSearchableTable(
      name,
      [["id", "utf8"], ["object_id", "utf8"], ["seq", "float64"], ["field", "utf8"], ["position", "int32"], ["start_char", "int32"], ["end_char", "int32"]],
      dimension,
      fullText,
    );
  }

  /** Replaces every segment of the given objects (deletes theirs, then adds the new rows). */
  async replaceSegments(name: string, objectIds: readonly string[], rows: readonly SegmentRow[]): Promise<void> {
    await this.deleteSegmentsOf(name, objectIds);
    if (rows.length === 0) return;
    const table = await this.table(name);
    const columns = await this.filterColumns(name);
    const records = rows.map(({ filters, ...row }) => ({ ...row, vector: Array.from(row.vector), ...filterRecord(columns, filters) }));
    await this.wrap(name, `writing segments of ${name}`, async () => {
      await table.add(records);
    });
  }

  async deleteSegmentsOf(name: string, objectIds: readonly string[]): Promise<void> {
    if (objectIds.length === 0) return;
    const table = await this.table(name);
    for (const part of idChunks(objectIds)) {
      await this.wrap(name, `deleting segments of ${name}`, () => table.delete(sqlIn("object_id", part)));
    }
  }

  /** Where each segment is: object, field, position and offsets. */
  async segmentInfo(name: string, ids: readonly string[]): Promise<Map<string, SegmentInfo>> {
    const table = await this.table(name);
    const out = new Map<string, SegmentInfo>();
    for (const part of idChunks(ids)) {
      const rows = await this.wrap(name, `reading ${name}`, () =>
        table.query().where(sqlIn("id", part)).select(["id", "object_id", "field", "position", "start_char", "end_char"]).toArrow().then(plainRows),
      );
      for (const row of rows) {
        out.set(String(row.id), {
          id: String(row.id),
          object_id: String(row.object_id),
          field: String(row.field),
          position: Number(row.position),
          start_char: Number(row.start_char),
          end_char: Number(row.end_char),
        });
      }
    }
    return out;
  }

  /**
   * Drops a table of an index (never the object table). Callers drop only tables a journal names
   * (journals.ts); a damaged table drops as well, since its directory goes whole.
   */
  async dropTable(name: string): Promise<void> {
    if (name === OBJECTS_TABLE) throw new InternalError("NOT_AN_INDEX_TABLE", "Refusing to drop the object table: only tables of an index are dropped");
    this.tables.delete(name);
    this.vectorCache?.forget(name);
    this.vectorSizes.delete(name);
    if (await this.hasTable(name)) await this.wrap(name, `dropping table ${name}`, () => this.db.dropTable(name));
  }

  /** Replaces the rows of the given objects (delete + insert in one merge commit). */
  async upsertIndexRows(name: string, rows: readonly IndexRow[]): Promise<void> {
    if (rows.length === 0) return;
    const table = await this.table(name);
    const columns = await this.filterColumns(name);
    const records = rows.map((row) => ({
      id: row.id,
      seq: row.seq,
      text: row.text,
      vector: Array.from(row.vector),
      ...filterRecord(columns, row.filters),
    }));
    await this.wrap(name, `writing rows of ${name}`, async () => {
      await table.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(records);
    });
  }

  async deleteIndexRows(name: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const table = await this.table(name);
    for (const part of idChunks(ids)) await this.wrap(name, `deleting rows of ${name}`, () => table.delete(sqlIn("id", part)));
  }

  /** Rows of a table, or those matching a `where` clause. */
  async countRows(name: string, where?: string): Promise<number> {
    const table = await this.table(name);
    return this.wrap(name, `counting rows of ${name}`, () => table.countRows(where));
  }

  /** The filter columns (`f_…`) a table has. */
  async filterColumns(name: string): Promise<Set<string>> {
    const table = await this.table(name);
    const schema = await this.wrap(name, `reading the schema of ${name}`, () => table.schema());
    return new Set(schema.fields.map((field) => field.name).filter((column) => FILTER_COLUMN.test(column)));
  }

  /** Adds the filter columns a table lacks (nullable, null in existing rows). */
  async ensureFilterColumns(name: string, columns: ReadonlyMap<string, FilterColumnType>): Promise<void> {
    const present = await this.filterColumns(name);
    const missing = [...columns].filter(([column]) => !present.has(column));
    if (missing.length === 0) return;
    for (const [column] of missing) if (!FILTER_COLUMN.test(column)) throw new InternalError("BAD_COLUMN", `not a filter column: ${column}`);
    const table = await this.table(name);
    await this.wrap(name, `adding filter columns to ${name}`, async () => {
      await table.addColumns(missing.map(([column, type]) => ({ name: column, valueSql: `CAST(NULL AS ${type})` })));
    });
  }

  /** Which of `ids` have a row in the index table. */
  presentIds(name: string, ids: readonly string[]): Promise<Set<string>> {
    return this.presentValues(name, "id", ids);
  }

  /** Which of `values` occur in a column of a table (read in chunks of ids). */
  private async presentValues(name: string, column: "id" | "object_id", values: readonly string[]): Promise<Set<string>> {
    const table = await this.table(name);
    const out = new Set<string>();
    for (const part of idChunks(values)) {
      const rows = await this.wrap(name, `reading ${name}`, () => table.query().where(sqlIn(column, part)).select([column]).toArrow().then(plainRows));
      for (const row of rows) out.add(String(row[column]));
    }
    return out;
  }

  /** The ids of the rows matching a `where` clause (loads them all). */
  async idsWhere(name: string, where: string): Promise<string[]> {
    const table = await this.table(name);
    const rows = await this.wrap(name, `reading ${name}`, () => table.query().where(where).select(["id"]).toArrow().then(plainRows));
    return rows.map((row) => String(row.id));
  }

  /** Which of the given objects have rows in a part table (segments, images). */
  partObjectsOf(name: string, objectIds: readonly string[]): Promise<Set<string>> {
    return this.presentValues(name, "object_id", objectIds);
  }

  /** The searchable text of rows, by id. */
  async texts(name: string, ids: readonly string[]): Promise<Map<string, string>> {
    const table = await this.table(name);
    const out = new Map<string, string>();
    for (const part of idChunks(ids)) {
      const rows = await this.wrap(name, `reading ${name}`, () =>
        table.query().where(sqlIn("id", part)).select(["id", "text"]).toArrow().then(plainRows),
      );
      for (const row of rows) out.set(String(row.id), String(row.text));
    }
    return out;
  }

  /**
   * Nearest rows by cosine similarity (score = 1 - cosine distance), best first; with `where`, among
   * the matching rows only (prefiltered). `exact` skips the approximate vector index: for a filter
   * that leaves few rows, scanning them is cheap and finds every one.
   */
  async vectorSearch(name: string, vector: Float32Array, limit: number, where?: string, exact = false): Promise<ScoredRows> {
    const table = await this.table(name);
    // Through the index, distances are the quantised graph's (on another scale than an exact scan's):
    // the candidates are scored again on their stored vectors, so every score is an exact cosine. A
    // snapshot does it here, by row id (from the vectors held in memory when there are, see
    // vector-cache.ts), the same way as the rescoring of lexical matches; the store itself has LanceDB
    // refine them.
    const rescore = !exact && this.latest !== null;
    const hits = await this.scoredRows(name, `vector search in ${name}`, "_distance", (columns) => {
      let query = table.vectorSearch(Array.from(vector)).distanceType("cosine");
      if (where) query = query.where(where);
      if (exact) query = query.bypassVectorIndex();
      else if (!rescore) query = query.refineFactor(1);
      query = query.select(columns).limit(limit);
      return (this.latest ? query.withRowId() : query).toArrow();
    });
    if (!rescore) return { ...hits, scores: hits.scores.map((distance) => 1 - distance) };
    // (rows without a stored vector are left out)
    const scores = cosines(vector, await this.vectorsOfRows(name, hits));
    return reorderRows({ ...hits, scores }, byScore(scores));
  }

  /**
   * Runs a query scored by `scoreColumn` (it is given the columns to select), and reads its rows'
   * ids: from the vectors this snapshot's process holds for the table when it holds them (the query
   * then reads no id column: 10,000 ids cost a lexical query 0.7 ms at 10,000 objects, 2.6 ms at
   * 100,000), else from the query.
   */
  private async scoredRows(
    name: string,
    what: string,
    scoreColumn: "_score" | "_distance",
    run: (columns: string[]) => Promise<ArrowTable>,
  ): Promise<ScoredRows> {
    const held = this.latest?.vectorCache?.get(name, this.pinnedVersions.get(name) ?? -1);
    if (held) {
      const data = await this.wrap(name, what, () => run([scoreColumn]));
      const rows = rowNumbers(data.getChild("_rowid"), data.numRows);
      // (the held vectors are of the version this snapshot reads: every row is among them)
      const positions = heldPositions(held, rows, rows.length);
      if (positions) return { ids: Array.from(positions, (at) => held.ids[at] as string), scores: numbers(data.getChild(scoreColumn), rows.length), rows };
    }
    const data = await this.wrap(name, what, () => run(["id", scoreColumn]));
    const count = data.numRows;
    const hits = { ids: strings(data.getChild("id"), count), scores: numbers(data.getChild(scoreColumn), count) };
    return this.latest ? { ...hits, rows: rowNumbers(data.getChild("_rowid"), count) } : hits;
  }

  /** Every stored object's id (loads the whole column). */
  async objectIds(): Promise<string[]> {
    const table = await this.objectsTable();
    if (!table) return [];
    return (await this.wrap(OBJECTS_TABLE, "reading object ids", () => table.query().select(["id"]).toArrow().then(plainRows))).map((row) => String(row.id));
  }

  /** The distinct objects a segments table has rows for (loads the whole column). */
  async segmentObjectIds(name: string): Promise<string[]> {
    const table = await this.table(name);
    const rows = await this.wrap(name, `reading ${name}`, () => table.query().select(["object_id"]).toArrow().then(plainRows));
    return [...new Set(rows.map((row) => String(row.object_id)))];
  }

  /** Every row's id, duplicates kept (for checks and tests; loads the whole column). */
  async rowIds(name: string): Promise<string[]> {
    const table = await this.table(name);
    const rows = await this.wrap(name, `reading ids of ${name}`, () => table.query().select(["id"]).toArrow().then(plainRows));
    return rows.map((row) => String(row.id));
  }

  /** Every row's vector, by id (for evaluation tools; loads the whole column). */
  async allVectors(name: string): Promise<Map<string, Float32Array>> {
    const table = await this.table(name);
    const rows = await this.wrap(name, `reading vectors of ${name}`, () => table.query().select(["id", "vector"]).toArrow().then(plainRows));
    return new Map(rows.map((row) => [String(row.id), Float32Array.from(row.vector as ArrayLike<number>)]));
  }

  /** Cosine similarity of `vector` to the rows of the given ids, by LanceDB (ids without a row are left out). */
  async similarities(name: string, vector: Float32Array, ids: readonly string[]): Promise<{ id: string; score: number }[]> {
    const table = await this.table(name);
    const out: { id: string; score: number }[] = [];
    for (const part of idChunks(ids)) {
      const rows = await this.wrap(name, `vector scoring in ${name}`, () =>
        table
          .vectorSearch(Array.from(vector))
          .distanceType("cosine")
          .where(sqlIn("id", part))
          .bypassVectorIndex()
          .select(["id", "_distance"])
          .limit(part.length)
          .toArrow().then(plainRows),
      );
      for (const row of rows) out.push({ id: String(row.id), score: 1 - Number(row._distance) });
    }
    return out;
  }

  /**
   * The stored vectors of the first `count` of rows a query of this snapshot returned, by position:
   * from the vectors held in memory when there are, else read directly by row id (no scan for the
   * ids).
   */
  async vectorsOfRows(name: string, hits: ScoredRows, count = hits.ids.length): Promise<RowVectors> {
    const n = Math.min(count, hits.ids.length);
    const offsets = new Int32Array(n).fill(-1);
    const norms = new Float64Array(n);
    // (no rows: nothing to read, from any store; a query without terms returns none)
    if (n === 0) return { dimension: 0, data: new Float32Array(0), offsets, norms };
    const rows = hits.rows;
    if (!this.latest || !rows) throw new InternalError("NOT_A_SNAPSHOT", "Row ids are read from the snapshot that returned them");
    const table = await this.table(name);
    // A search counts once towards loading the table's vectors, however many reads it makes.
    const held = this.latest.heldVectors(name, this.pinnedVersions.get(name), table, !this.usesCounted.has(name));
    this.usesCounted.add(name);
    const found = held ? heldPositions(held, rows, n, hits.ids) : null;
    if (held && found) {
      found.forEach((at, i) => {
        offsets[i] = at * held.dimension;
        norms[i] = held.norms[at] as number;
      });
      return { dimension: held.dimension, data: held.vectors, offsets, norms };
    }
    const wanted = Array.from(rows.subarray(0, n), (row) => BigInt(row));
    const data = await this.wrap(name, `reading vectors of ${name}`, () => table.takeRowIds(wanted).select(["id", "vector"]).toArrow());
    const dimension = (data.schema.fields.find((field) => field.name === "vector")?.type as { listSize?: number } | undefined)?.listSize ?? 0;
    const positions = new Map<string, number>();
    for (let i = 0; i < n; i++) positions.set(hits.ids[i] as string, i);
    const packed = new Float32Array(n * dimension);
    const ids = data.getChild("id");
    const vectors = data.getChild("vector");
    for (let i = 0; i < data.numRows; i++) {
      const at = positions.get(String(ids?.get(i)));
      const stored = vectors?.get(i) as { toArray(): Float32Array } | null;
      if (at === undefined || !stored) continue;
      packed.set(stored.toArray(), at * dimension);
      offsets[at] = at * dimension;
      norms[at] = squaredNorm(packed, at * dimension, dimension);
    }
    return { dimension, data: packed, offsets, norms };
  }

  /**
   * The vectors this store holds for `name` at `version`, if any; counts the use, and starts loading
   * them (in the background, from `table`, a handle at that version) when the cache says so.
   */
  private heldVectors(name: string, version: number | undefined, table: Table, countUse: boolean): HeldVectors | undefined {
    const cache = this.vectorCache;
    if (!cache || version === undefined) return undefined;
    const held = cache.get(name, version);
    if (held || !countUse) return held;
    const size = this.vectorSizes.get(name);
    if (size?.version !== version) {
      // the size decides whether the vectors fit: read once per version, off the search's path
      const known = { version, bytes: Number.NaN };
      this.vectorSizes.set(name, known);
      this.vectorBytes(table)
        .then((bytes) => (known.bytes = bytes))
        .catch(() => {});
      return undefined;
    }
    const bytes = size.bytes;
    if (!Number.isFinite(bytes) || !cache.use(name, version, bytes)) return undefined;
    const load = this.loadVectors(table, bytes)
      .then((loaded) => cache.loaded(name, version, loaded))
      .catch(() => cache.failed(name, version))
      .finally(() => this.vectorLoads.delete(load));
    this.vectorLoads.add(load);
    return undefined;
  }
  /** The size of a table's held vectors: rows × (dimension × 4 bytes, and 8 for the sum of squares). */
  private async vectorBytes(table: Table): Promise<number> {
    const [rows, schema] = await Promise.all([table.countRows(), table.schema()]);
    const type = schema.fields.find((field) => field.name === "vector")?.type as { listSize?: number } | undefined;
    return rows * heldRowBytes(type?.listSize ?? 0);
  }

  /** Reads a table's whole vector column (batch by batch) into one array. */
  private async loadVectors(table: Table, bytes: number): Promise<HeldVectors> {
    const schema = await table.schema();
    const dimension = (schema.fields.find((field) => field.name === "vector")?.type as { listSize: number }).listSize;
    const capacity = Math.floor(bytes / heldRowBytes(dimension));
    const vectors = new Float32Array(capacity * dimension);
    const norms = new Float64Array(capacity);
    const rows = new RowIndex();
    const ids: string[] = [];
    for await (const batch of table.query().select(["id", "vector"]).withRowId()) {
      if (!this.vectorCache) throw new InternalError("STORE_CLOSED", "The store was closed while loading vectors");
      const idColumn = batch.getChild("id");
      const rowIds = rowNumbers(batch.getChild("_rowid"), batch.numRows);
      // The batch's vectors are one run of floats (a fixed-size list column): copied a row at a time
      // from it, with no array made per row.
      const data = batch.getChild("vector")?.data[0];
      const floats = data?.children[0]?.values as Float32Array | undefined;
      if (!data || !floats) continue;
      for (let i = 0; i < batch.numRows; i++) {
        if (!data.getValid(i) || ids.length >= capacity) continue;
        const start = i * dimension; // (a sliced list's child values start at its first row already)
        vectors.set(floats.subarray(start, start + dimension), ids.length * dimension);
        norms[ids.length] = squaredNorm(vectors, ids.length * dimension, dimension);
        rows.set(rowIds[i] as number, ids.length);
        ids.push(String(idColumn?.get(i)));
      }
    }
    return { dimension, rows, ids, vectors, norms };
  }

  /** Settles once no load of vectors is under way (for tests). */
  async vectorLoadsSettled(): Promise<void> {
    while (this.vectorLoads.size > 0) await Promise.allSettled([...this.vectorLoads]);
  }

  /**
   * Loads a table's vector index into memory ahead of its first query (a cold process, while the
   * query's vector is still being computed); nothing when the table has none.
   */
  async prewarmVectorIndex(name: string): Promise<void> {
    // Once per table and process: the pages of `--all` are searches of their own.
    const root = this.latest ?? this;
    if (root.prewarmed.has(name)) return;
    root.prewarmed.add(name);
    const table = await this.table(name);
    const indices = await this.wrap(name, `listing the indexes of ${name}`, () => table.listIndices());
    const index = indices.find((candidate) => candidate.columns.includes("vector"));
    if (index) await this.wrap(name, `loading the vector index of ${name}`, () => table.prewarmIndex(index.name));
  }

  /** Nearest rows of a part table (images, segments), with the object each belongs to; as vectorSearch. */
  async partVectorSearch(name: string, vector: Float32Array, limit: number, where?: string, exact = false): Promise<PartScore[]> {
    const table = await this.table(name);
    const rows = await this.wrap(name, `vector search in ${name}`, () => {
      let query = table.vectorSearch(Array.from(vector)).distanceType("cosine");
      if (where) query = query.where(where);
      query = exact ? query.bypassVectorIndex() : query.refineFactor(1); // (exact scores: see vectorSearch)
      return query.select(["id", "object_id", "field", "position", "text", "_distance"]).limit(limit).toArrow().then(plainRows);
    });
    return rows.map(toPartScore);
  }

  /** Cosine similarity of `vector` to every row of the given objects in a part table. */
  async partSimilarities(name: string, vector: Float32Array, objectIds: readonly string[]): Promise<PartScore[]> {
    const table = await this.table(name);
    const out: PartScore[] = [];
    for (const part of idChunks(objectIds)) {
      const count = await this.wrap(name, `counting rows of ${name}`, () => table.countRows(sqlIn("object_id", part)));
      if (count === 0) continue;
      const rows = await this.wrap(name, `vector scoring in ${name}`, () =>
        table
          .vectorSearch(Array.from(vector))
          .distanceType("cosine")
          .where(sqlIn("object_id", part))
          .bypassVectorIndex()
          .select(["id", "object_id", "field", "position", "text", "_distance"])
          .limit(count)
          .toArrow().then(plainRows),
      );
      out.push(...rows.map(toPartScore));
    }
    return out;
  }

  /**
   * BM25 matches of a query over the `text` column, as LanceDB lists them: mostly best first (rows
   * not yet in its full-text index come after the others), equal scores in no fixed order.
   */
  async textSearch(name: string, query: string, limit: number, where?: string): Promise<ScoredRows> {
    // LanceDB reads `"…"` as a phrase, which needs word positions the index does not keep (it fails
    // the search): quotes are not phrase syntax here, their words are matched as any others.
    const terms = query.replaceAll('"', " ");
    if (terms.trim() === "") return NO_ROWS;
    const table = await this.table(name);
    return this.scoredRows(name, `full-text search in ${name}`, "_score", (columns) => {
      const search = table.query().fullTextSearch(terms, { columns: "text" });
      const query = (where ? search.where(where) : search).select(columns).limit(limit);
      return (this.latest ? query.withRowId() : query).toArrow();
    });
  }

  /**
   * Gives new filter columns their scalar indexes, folds new rows into every index, then compacts.
   * Search works throughout: unindexed rows are searched flat.
   */
  async optimizeIndexTable(name: string): Promise<void> {
    const table = await this.table(name);
    await this.wrap(name, `optimizing ${name}`, async () => {
      const indices = await table.listIndices();
      // Filter columns: bitmaps suit text with few distinct values (categories), B-trees the rest;
      // this LanceDB builds bitmaps on text only. A bitmap column that outgrows it becomes a B-tree.
      const { btree, bitmap } = this.mod.lancedb.Index;
      for (const field of (await table.schema()).fields) {
        const column = field.name;
        const existing = indices.find((index) => index.columns.includes(column))?.indexType;
        if (!FILTER_COLUMN.test(column) || (existing !== undefined && existing !== "Bitmap")) continue;
        if (!this.mod.arrow.DataType.isUtf8(field.type)) {
          await table.createIndex(column, { config: btree() });
        } else if (await this.distinctAtMost(table, column, BITMAP_MAX_DISTINCT)) {
          if (existing === undefined) await table.createIndex(column, { config: bitmap() });
        } else {
          await table.createIndex(column, { config: btree(), replace: true });
        }
      }
      await table.optimize({ cleanupOlderThan: new Date(Date.now() - 60_000) });
    });
  }

  /**
   * Builds the approximate vector index once a table reaches VECTOR_INDEX_MIN_ROWS rows; true when
   * it built one. Training takes a minute or more at 100,000 rows, so callers run it without the
   * write lock: LanceDB commits an index build alongside concurrent appends and deletes.
   */
  async buildVectorIndexIfDue(name: string): Promise<boolean> {
    const table = await this.table(name);
    return this.wrap(name, `building the vector index of ${name}`, async () => {
      const rows = await table.countRows();
      if (rows < VECTOR_INDEX_MIN_ROWS || (await table.listIndices()).some((index) => index.columns.includes("vector"))) return false;
      await table.createIndex("vector", {
        config: this.mod.lancedb.Index.hnswSq({ distanceType: "cosine", numPartitions: Math.ceil(rows / ROWS_PER_HNSW_GRAPH) }),
      });
      return true;
    });
  }

  /** Whether a column has at most `max` distinct values among (a sample of) its rows. */
  private async distinctAtMost(table: Table, column: string, max: number): Promise<boolean> {
    const rows = await table.query().select([column]).limit(CARDINALITY_SAMPLE).toArrow().then(plainRows);
    const seen = new Set<unknown>();
    for (const row of rows) {
      seen.add(row[column]);
      if (seen.size > max) return false;
    }
    return true;
  }

  /** The scalar index type of each indexed filter column (for status and benchmarks). */
  async filterIndexes(name: string): Promise<Map<string, string>> {
    const table = await this.table(name);
    const indices = await this.wrap(name, `listing the indexes of ${name}`, () => table.listIndices());
    return new Map(indices.filter((index) => FILTER_COLUMN.test(index.columns[0] ?? "")).map((index) => [index.columns[0] as string, index.indexType]));
  }

  /** The type of a table's approximate vector index (e.g. `IVF_HNSW_SQ`), or null when it has none. */
  async vectorIndexType(name: string): Promise<string | null> {
    const table = await this.table(name);
    const indices = await this.wrap(name, `listing the indexes of ${name}`, () => table.listIndices());
    return indices.find((index) => index.columns.includes("vector"))?.indexType ?? null;
  }

  close(): void {
    this.closed = true;
    this.tables.clear();
    // (a load under way stops at its next batch)
    this.vectorCache = null;
    this.db.close();
  }
}
