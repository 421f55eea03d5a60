/** Per-index and per-object processing state, derived from stored progress and object sequence numbers. */
import type { EngineContext } from "./context.js";
import type { IndexProgress } from "./project.js";
import { indexTableName } from "./project.js";
import type { IndexRecord, IndexStatusCounts, ObjectIndexStatus } from "./types.js";

function errorsIn(progress: IndexProgress, above: number, atMost: number): number {
  return Object.values(progress.errors).filter((error) => error.seq > above && error.seq <= atMost).length;
}

/**
 * Counts of objects per state for one index:
 * READY: indexed and covered by the built indexes; PROCESSING: being embedded, or written
 * and searchable but not yet folded into the built indexes (`incomplete`); UPLOADED: stored,
 * not yet picked up; ERROR: could not be indexed.
 */
export async function indexStatusCounts(ctx: EngineContext, index: IndexRecord): Promise<IndexStatusCounts> {
  const store = await ctx.store();
  const progress = await ctx.project.progress(index.id);
  const optimized = Math.min(progress.optimizedSeq, progress.indexedSeq);
  const processed = Math.max(progress.indexedSeq, progress.processingSeq ?? 0);
  const [ready, processing, uploaded] = await Promise.all([
    store.countObjects(-1, optimized),
    store.countObjects(optimized, processed),
    store.countObjects(processed),
  ]);
  return {
    UPLOADED: uploaded,
    PROCESSING: processing - errorsIn(progress, optimized, processed),
    READY: ready - errorsIn(progress, -1, optimized),
    ERROR: errorsIn(progress, -1, Infinity),
  };
}

/** The state of one stored object (with write sequence `seq`) in one index. */
export async function objectIndexStatus(
  ctx: EngineContext,
  index: IndexRecord,
  objectId: string,
  seq: number,
): Promise<ObjectIndexStatus> {
  const progress = await ctx.project.progress(index.id);
  const store = await ctx.store();
  const searchable = (await store.presentIds(indexTableName(index.id), [objectId])).has(objectId);
  const error = progress.errors[objectId];
  if (error && error.seq === seq) return { id: index.id, status: "ERROR", searchable, error: error.message };
  let status: ObjectIndexStatus["status"] = "UPLOADED";
  if (seq <= Math.min(progress.optimizedSeq, progress.indexedSeq)) status = "READY";
  else if (seq <= progress.indexedSeq || seq <= (progress.processingSeq ?? 0)) status = "PROCESSING";
  return { id: index.id, status, searchable };
}

/**
 * Whether an index still has stored objects to take in, and how many it has taken in: null when it
 * has none left. Cheap when the index is caught up (a file read); counts only when it is not.
 */
export async function buildingState(ctx: EngineContext, index: IndexRecord): Promise<{ searchable: number; total: number } | null> {
  const progress = await ctx.project.progress(index.id);
  if (progress.indexedSeq >= (await ctx.project.lastSeq()) && progress.processingSeq === null) return null;
  const store = await ctx.store();
  const [pending, total] = await Promise.all([store.countObjects(progress.indexedSeq), store.countObjects()]);
  if (pending === 0) return null;
  return { searchable: total - pending - errorsIn(progress, -1, progress.indexedSeq), total };
}

/** Objects already written to the index (searchable), whether or not the built indexes cover them yet. */
export async function indexedObjectCount(ctx: EngineContext, index: IndexRecord): Promise<number> {
  return (await ctx.store()).countObjects(-1, (await ctx.project.progress(index.id)).indexedSeq);
}
