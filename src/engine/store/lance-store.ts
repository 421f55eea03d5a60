/**
 * The project's store: its LanceDB database (database.ts), read and written at the tables' latest
 * versions, and the snapshots it gives for reads that must see one version throughout (snapshot.ts).
 * Each kind of table has its module: the object table (objects-table.ts), the tables of an index with
 * one row per object (index-tables.ts), its part tables (part-tables.ts: highlight segments and
 * images), their searches (table-search.ts) and indexes (table-maintenance.ts). The store's reads are
 * a snapshot's too (reads.ts); writes are the store's only.
 */
import { DEFAULT_TOKENIZER, type Tokenizer } from "../tokenizer.js";
import { InternalError } from "../errors.js";
import { Database, type Tables } from "./database.js";
import { VectorHolder } from "./held-vectors.js";
import * as indexTables from "./index-tables.js";
import { ObjectTableWrites, OBJECTS_TABLE, type ObjectRow } from "./objects-table.js";
import * as parts from "./part-tables.js";
import { StoreReads } from "./reads.js";
import { Snapshot, type PinnedHandles } from "./snapshot.js";
import * as maintenance from "./table-maintenance.js";

export type { FilterColumnType, FilterRecord, IndexRow } from "./index-tables.js";
export type { ObjectRow } from "./objects-table.js";
export type { PartScore, SegmentInfo, SegmentRow } from "./part-tables.js";
export type { RowVectors, ScoredRows } from "./rows.js";
export type { Snapshot } from "./snapshot.js";
export { OBJECTS_TABLE } from "./objects-table.js";
export { BITMAP_MAX_DISTINCT, VECTOR_INDEX_MIN_ROWS } from "./table-maintenance.js";

export interface StoreOptions {
  /** how much of tables' vectors a long-running process may hold in memory for the rescoring (vector-cache.ts); none by default */
  vectorCacheBytes?: number;
  /**
   * The tables the project's records (its catalog) say exist: one of them missing from the database
   * is reported as damage (CORRUPT_TABLE) when an operation fails, rather than as a bug.
   */
  expectedTables?: () => readonly string[] | Promise<readonly string[]>;
  /** How old a snapshot's idea of a table's latest version may be, in ms (Database.latestVersion); 0 by default: read each time. */
  versionMaxAgeMs?: number;
}

export class LanceStore extends StoreReads {
  protected readonly tables: Tables;
  private readonly objects: ObjectTableWrites;
  /** Handles of the tables at the versions snapshots pinned, shared by them. */
  private readonly pinned: PinnedHandles = new Map();

  private constructor(
    private readonly db: Database,
    /** Tables' vectors held in memory for the snapshots' rescoring (held-vectors.ts). */
    private readonly vectors: VectorHolder,
  ) {
    super();
    this.tables = db.latest;
    this.objects = new ObjectTableWrites(db);
  }

  /**
   * Opens (creating if needed) the database in `dir`; reads always see other processes' commits.
   * @param options.vectorCacheBytes how much of tables' vectors a long-running process may hold in
   *   memory for the rescoring (vector-cache.ts); none by default
   */
  static async open(dir: string, options: StoreOptions = {}): Promise<LanceStore> {
    const db = await Database.open(dir, options.expectedTables, options.versionMaxAgeMs);
    return new LanceStore(db, new VectorHolder(options.vectorCacheBytes));
  }

  /** A read-only view of the tables at the versions it first reads (snapshot.ts). */
  snapshot(): Snapshot {
    return new Snapshot(this.db, this.pinned, this.vectors);
  }

  // the object table (objects-table.ts)

  upsertObjects(rows: readonly ObjectRow[]): Promise<void> {
    return this.objects.upsert(rows);
  }

  appendObjects(rows: readonly ObjectRow[]): Promise<void> {
    return this.objects.append(rows);
  }

  restoreObjects(version: number): Promise<void> {
    return this.objects.restore(version);
  }

  deleteObjects(ids: readonly string[]): Promise<void> {
    return this.objects.delete(ids);
  }

  optimizeObjects(): Promise<void> {
    return this.objects.optimize();
  }

  // the tables of an index (index-tables.ts, part-tables.ts, table-maintenance.ts)

  createIndexTable(name: string, dimension: number, tokenizer: Tokenizer = DEFAULT_TOKENIZER): Promise<void> {
    return indexTables.createIndexTable(this.db, name, dimension, tokenizer);
  }

  createSegmentTable(name: string, dimension: number, tokenizer: Tokenizer | null = DEFAULT_TOKENIZER): Promise<void> {
    return parts.createSegmentTable(this.db, name, dimension, tokenizer);
  }

  upsertIndexRows(name: string, rows: readonly indexTables.IndexRow[]): Promise<void> {
    return indexTables.upsertIndexRows(this.db, name, rows);
  }

  deleteIndexRows(name: string, ids: readonly string[]): Promise<void> {
    return indexTables.deleteIndexRows(this.db, name, ids);
  }

  ensureFilterColumns(name: string, columns: ReadonlyMap<string, indexTables.FilterColumnType>): Promise<void> {
    return indexTables.ensureFilterColumns(this.db, name, columns);
  }

  replaceSegments(name: string, objectIds: readonly string[], rows: readonly parts.SegmentRow[]): Promise<void> {
    return parts.replaceSegments(this.db, name, objectIds, rows);
  }

  deleteSegmentsOf(name: string, objectIds: readonly string[]): Promise<void> {
    return parts.deleteSegmentsOf(this.db, name, objectIds);
  }

  optimizeIndexTable(name: string): Promise<void> {
    return maintenance.optimizeIndexTable(this.db, name);
  }

  buildVectorIndexIfDue(name: string): Promise<boolean> {
    return maintenance.buildVectorIndexIfDue(this.db, name);
  }

  /**
   * Drops a table of an index (never the object table). Callers drop only tables a journal names
   * (journals.ts); a damaged table drops as well, since its directory goes whole.
   */
  async dropTable(name: string): Promise<void> {
    if (name === OBJECTS_TABLE) throw new InternalError("NOT_AN_INDEX_TABLE", "Refusing to drop the object table: only tables of an index are dropped");
    this.vectors.forget(name);
    await this.db.dropTable(name);
  }

  /** Makes every commit check `guard` first (a bucket project's write lease: Database.writeTable). */
  guardWrites(guard: () => Promise<void>): void {
    this.db.guardWrites(guard);
  }

  /** Throws the damaged or missing table found when every table is read through (Database.checkTables); `project copy` checks its source so. */
  async checkTables(): Promise<void> {
    const damage = await this.db.checkTables();
    if (damage) throw damage;
  }

  /** Fences tables for a lease taken over from a holder that did not release it (Database.fence). */
  fence(names: readonly string[]): Promise<void> {
    return this.db.fence(names);
  }

  /** Settles once no load of vectors is under way (for tests). */
  vectorLoadsSettled(): Promise<void> {
    return this.vectors.settled();
  }

  close(): void {
    this.vectors.close();
    this.db.close();
  }
}
