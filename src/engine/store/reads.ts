/**
 * What both the store and a snapshot read: every read of every kind of table, each the function of the
 * same name in the module of its kind of table (documented there), run on the versions the reader
 * sees (`tables`): the latest (lance-store.ts) or those a snapshot pinned (snapshot.ts).
 */
import type { Tables } from "./database.js";
import * as indexTables from "./index-tables.js";
import * as objects from "./objects-table.js";
import * as parts from "./part-tables.js";
import type { ScoredRows } from "./rows.js";
import * as maintenance from "./table-maintenance.js";
import * as search from "./table-search.js";

export abstract class StoreReads {
  /** The tables as this reader sees them. */
  protected abstract readonly tables: Tables;

  tableNames(): Promise<string[]> {
    return this.tables.db.tableNames();
  }

  hasTable(name: string): Promise<boolean> {
    return this.tables.db.hasTable(name);
  }

  // the object table (objects-table.ts)

  objectsVersion(): Promise<number> {
    return objects.objectsVersion(this.tables);
  }

  hasObjectsVersion(version: number, since: number): Promise<boolean> {
    return objects.hasObjectsVersion(this.tables, version, since);
  }

  maxSeq(): Promise<number> {
    return objects.maxSeq(this.tables);
  }

  createdAt(ids: readonly string[]): Promise<Map<string, string>> {
    return objects.createdAt(this.tables, ids);
  }

  getObjects(ids: readonly string[]): Promise<Map<string, objects.ObjectRow>> {
    return objects.getObjects(this.tables, ids);
  }

  sampleObjects(limit: number): Promise<objects.ObjectRow[]> {
    return objects.sampleObjects(this.tables, limit);
  }

  listObjects(offset: number, limit: number): Promise<objects.ObjectRow[]> {
    return objects.listObjects(this.tables, offset, limit);
  }

  objectsAfter(seq: number, limit: number): Promise<objects.ObjectRow[]> {
    return objects.objectsAfter(this.tables, seq, limit);
  }

  countObjects(above?: number, atMost?: number): Promise<number> {
    return objects.countObjects(this.tables, above, atMost);
  }

  countObjectsAmong(ids: readonly string[], above?: number, atMost?: number): Promise<number> {
    return objects.countObjectsAmong(this.tables, ids, above, atMost);
  }

  objectIdsAfter(seq: number): Promise<string[]> {
    return objects.objectIdsAfter(this.tables, seq);
  }

  objectIds(): Promise<string[]> {
    return objects.objectIds(this.tables);
  }

  // any table of an index (index-tables.ts)

  countRows(name: string, where?: string): Promise<number> {
    return indexTables.countRows(this.tables, name, where);
  }

  filterColumns(name: string): Promise<Set<string>> {
    return indexTables.filterColumns(this.tables, name);
  }

  presentIds(name: string, ids: readonly string[]): Promise<Set<string>> {
    return indexTables.presentIds(this.tables, name, ids);
  }

  idsWhere(name: string, where: string): Promise<string[]> {
    return indexTables.idsWhere(this.tables, name, where);
  }

  texts(name: string, ids: readonly string[]): Promise<Map<string, string>> {
    return indexTables.texts(this.tables, name, ids);
  }

  /** The ids of table `name`'s rows (those `where` matches: a compiled filter). */
  rowIds(name: string, where?: string): Promise<string[]> {
    return indexTables.rowIds(this.tables, name, where);
  }

  allVectors(name: string): Promise<Map<string, Float32Array>> {
    return indexTables.allVectors(this.tables, name);
  }

  // searches (table-search.ts)

  textSearch(name: string, query: string, limit: number, where?: string): Promise<ScoredRows> {
    return search.textSearch(this.tables, name, query, limit, where);
  }

  fuzzyTextSearch(name: string, words: readonly { word: string; fuzziness: number }[], limit: number, where?: string): Promise<ScoredRows> {
    return search.fuzzyTextSearch(this.tables, name, words, limit, where);
  }

  vectorSearch(name: string, vector: Float32Array, limit: number, where?: string, exact?: boolean): Promise<ScoredRows> {
    return search.vectorSearch(this.tables, name, vector, limit, where, exact);
  }

  similarities(name: string, vector: Float32Array, ids: readonly string[]): Promise<{ id: string; score: number }[]> {
    return search.similarities(this.tables, name, vector, ids);
  }

  // part tables: segments and images (part-tables.ts)

  segmentInfo(name: string, ids: readonly string[]): Promise<Map<string, parts.SegmentInfo>> {
    return parts.segmentInfo(this.tables, name, ids);
  }

  partObjectsOf(name: string, objectIds: readonly string[]): Promise<Set<string>> {
    return parts.partObjectsOf(this.tables, name, objectIds);
  }

  segmentObjectIds(name: string): Promise<string[]> {
    return parts.segmentObjectIds(this.tables, name);
  }

  partVectorSearch(name: string, vector: Float32Array, limit: number, where?: string, exact?: boolean): Promise<parts.PartScore[]> {
    return parts.partVectorSearch(this.tables, name, vector, limit, where, exact);
  }

  partSimilarities(name: string, vector: Float32Array, objectIds: readonly string[]): Promise<parts.PartScore[]> {
    return parts.partSimilarities(this.tables, name, vector, objectIds);
  }

  // the indexes of the tables (table-maintenance.ts)

  prewarmVectorIndex(name: string): Promise<void> {
    return maintenance.prewarmVectorIndex(this.tables, name);
  }

  filterIndexes(name: string): Promise<Map<string, string>> {
    return maintenance.filterIndexes(this.tables, name);
  }

  vectorIndexType(name: string): Promise<string | null> {
    return maintenance.vectorIndexType(this.tables, name);
  }
}
