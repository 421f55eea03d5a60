/** Object store operations: add (upsert), get, list, delete. */
import type { EngineContext } from "../context.js";
import { NotFoundError } from "../errors.js";
import { newObjectId } from "../ids.js";
import { ensureWorker } from "../indexing/spawn.js";
import { highlightsEnabled } from "../indexing/extract.js";
import { indexTableName, segmentTableName } from "../project.js";
import { objectIndexStatus } from "../status.js";
import type { ObjectRow } from "../store/lancedb.js";
import type { JsonObject, ObjectInfo, StoredObject } from "../types.js";
import { objectId, parseObjectsText } from "./parse.js";

/** One input of `objects add`: its text and a name for messages (file path or `<stdin>`). */
export interface ObjectsInput {
  text: string;
  source: string;
}

export interface AddObjectsOptions {
  /** Field holding the object id (default `id`); objects without it get a generated UUID. */
  idField?: string;
}

export interface AddObjectsResult {
  /** Distinct objects written (a repeated id counts once: the last one wins). */
  count: number;
  ids: string[];
}

/**
 * Parses every input, then writes all objects in one commit: a malformed object anywhere
 * writes nothing. Starts the background worker when indexes exist.
 */
export async function addObjects(
  ctx: EngineContext,
  inputs: readonly ObjectsInput[],
  options: AddObjectsOptions,
  now: Date,
): Promise<AddObjectsResult> {
  const idField = options.idField ?? "id";
  const byId = new Map<string, JsonObject>();
  for (const input of inputs) {
    for (const { object, where } of parseObjectsText(input.text, input.source)) {
      const id = objectId(object, idField, where) ?? newObjectId();
      byId.delete(id);
      byId.set(id, object);
    }
  }
  const ids = [...byId.keys()];
  if (ids.length === 0) return { count: 0, ids };
  const store = await ctx.store();
  const stamp = now.toISOString();
  await ctx.project.locked(async () => {
    const existing = await store.getObjects(ids);
    const first = ctx.project.reserveSeq(ids.length);
    const rows: ObjectRow[] = ids.map((id, i) => ({
      id,
      body: JSON.stringify(byId.get(id)),
      seq: first + i,
      created_at: existing.get(id)?.created_at ?? stamp,
      updated_at: stamp,
    }));
    await store.upsertObjects(rows);
  });
  if (ctx.project.indexes().length > 0) ensureWorker(ctx.project);
  return { count: ids.length, ids };
}

function toStored(row: ObjectRow): StoredObject {
  return { id: row.id, object: JSON.parse(row.body) as JsonObject, created_at: row.created_at, updated_at: row.updated_at };
}

async function findObjectRow(ctx: EngineContext, id: string): Promise<ObjectRow> {
  const row = ctx.project.exists() ? (await (await ctx.store()).getObjects([id])).get(id) : undefined;
  if (!row) throw new NotFoundError("OBJECT_NOT_FOUND", `Object "${id}" not found`);
  return row;
}

/** An object with its processing state in every index. */
export async function getObject(ctx: EngineContext, id: string): Promise<ObjectInfo> {
  const row = await findObjectRow(ctx, id);
  const indexes = await Promise.all(ctx.project.indexes().map((index) => objectIndexStatus(ctx, index, id, row.seq)));
  const complete = indexes.every((entry) => entry.status === "READY" || entry.status === "ERROR");
  return { ...toStored(row), status: { state: complete ? "complete" : "incomplete", indexes } };
}

/** Objects in id order. */
export async function listObjects(ctx: EngineContext, offset: number, limit: number): Promise<StoredObject[]> {
  if (!ctx.project.exists()) return [];
  return (await (await ctx.store()).listObjects(offset, limit)).map(toStored);
}

/** Deletes an object from the store and from every index, in one locked step. */
export async function deleteObject(ctx: EngineContext, id: string): Promise<void> {
  await findObjectRow(ctx, id);
  const store = await ctx.store();
  await ctx.project.locked(async () => {
    await store.deleteObjects([id]);
    for (const index of ctx.project.indexes()) {
      await store.deleteIndexRows(indexTableName(index.id), [id]);
      if (highlightsEnabled(index.configuration)) await store.deleteSegmentsOf(segmentTableName(index.id), [id]);
      const progress = ctx.project.progress(index.id);
      if (progress.errors[id]) {
        delete progress.errors[id];
        ctx.project.saveProgress(index.id, progress);
      }
    }
  });
}
