/**
 * The part tables of an index, one row per part of an object: highlight segments (`segments_<idx
 * id>`, one per sentence or span of a field, their text full-text indexed) and images (`images_<idx
 * id>`, one per image, their text the image's reference, searched by vector only). Each row names
 * its object (`object_id`), field and position in it.
 */
import { plainRows } from "./arrow-columns.js";
import type { Database, Tables } from "./database.js";
import type { Tokenizer } from "../tokenizer.js";
import { createSearchableTable, filterColumns, filterRecord, presentValues, type FilterRecord } from "./index-tables.js";
import { idChunks, sqlIn } from "./sql.js";

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

/**
 * Creates a part table of an index, one row per part of an object: highlight segments (their text
 * full-text indexed with the index's tokenizer), or images (`tokenizer` null: their text is the
 * image's reference, searched by vector only).
 */
export function createSegmentTable(db: Database, name: string, dimension: number, tokenizer: Tokenizer | null): Promise<void> {
  return createSearchableTable(
    db,
    name,
    [["id", "utf8"], ["object_id", "utf8"], ["seq", "float64"], ["field", "utf8"], ["position", "int32"], ["start_char", "int32"], ["end_char", "int32"]],
    dimension,
    tokenizer,
  );
}

/** Replaces every segment of the given objects (deletes theirs, then adds the new rows). */
export async function replaceSegments(db: Database, name: string, objectIds: readonly string[], rows: readonly SegmentRow[]): Promise<void> {
  await deleteSegmentsOf(db, name, objectIds);
  if (rows.length === 0) return;
  const table = await db.writeTable(name);
  const columns = await filterColumns(db.latest, name);
  const records = rows.map(({ filters, ...row }) => ({ ...row, vector: Array.from(row.vector), ...filterRecord(columns, filters) }));
  await db.wrap(name, `writing segments of ${name}`, async () => {
    await table.add(records);
  });
}

export async function deleteSegmentsOf(db: Database, name: string, objectIds: readonly string[]): Promise<void> {
  if (objectIds.length === 0) return;
  const table = await db.writeTable(name);
  for (const part of idChunks(objectIds)) {
    await db.wrap(name, `deleting segments of ${name}`, () => table.delete(sqlIn("object_id", part)));
  }
}

/** Where each segment is: object, field, position and offsets. */
export async function segmentInfo(tables: Tables, name: string, ids: readonly string[]): Promise<Map<string, SegmentInfo>> {
  const table = await tables.table(name);
  const out = new Map<string, SegmentInfo>();
  for (const part of idChunks(ids)) {
    const rows = await tables.wrap(name, `reading ${name}`, () =>
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

/** Which of the given objects have rows in a part table (segments, images). */
export function partObjectsOf(tables: Tables, name: string, objectIds: readonly string[]): Promise<Set<string>> {
  return presentValues(tables, name, "object_id", objectIds);
}

/** The distinct objects a segments table has rows for (loads the whole column). */
export async function segmentObjectIds(tables: Tables, name: string): Promise<string[]> {
  const table = await tables.table(name);
  const rows = await tables.wrap(name, `reading ${name}`, () => table.query().select(["object_id"]).toArrow().then(plainRows));
  return [...new Set(rows.map((row) => String(row.object_id)))];
}

/** Nearest rows of a part table (images, segments), with the object each belongs to; as vectorSearch. */
export async function partVectorSearch(tables: Tables, name: string, vector: Float32Array, limit: number, where?: string, exact = false): Promise<PartScore[]> {
  const table = await tables.table(name);
  const rows = await tables.wrap(name, `vector search in ${name}`, () => {
    let query = table.vectorSearch(Array.from(vector)).distanceType("cosine");
    if (where) query = query.where(where);
    query = exact ? query.bypassVectorIndex() : query.refineFactor(1); // (exact scores: see vectorSearch)
    return query.select(["id", "object_id", "field", "position", "text", "_distance"]).limit(limit).toArrow().then(plainRows);
  });
  return rows.map(toPartScore);
}

/** Cosine similarity of `vector` to every row of the given objects in a part table. */
export async function partSimilarities(tables: Tables, name: string, vector: Float32Array, objectIds: readonly string[]): Promise<PartScore[]> {
  const table = await tables.table(name);
  const out: PartScore[] = [];
  for (const part of idChunks(objectIds)) {
    const count = await tables.wrap(name, `counting rows of ${name}`, () => table.countRows(sqlIn("object_id", part)));
    if (count === 0) continue;
    const rows = await tables.wrap(name, `vector scoring in ${name}`, () =>
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
