/**
 * How far an index has got, computed here and nowhere else: `index status` and `--wait`, `worker
 * status`, a search's INDEX_BUILDING warning, the HTTP API and the search page all show these counts.
 *
 * READY: a search finds the object: its current version is committed to the index's tables, whether
 * the built full-text/vector indexes serve it yet or the flat search of the rows they have not taken
 * in. PROCESSING: in the batch a worker has claimed and not committed yet. UPLOADED: stored, waiting
 * for a worker. ERROR: could not be indexed (the reason is in the index's progress).
 */
import type { EngineContext } from "./context.js";
import type { IndexProgress } from "./project.js";
import { indexTableName } from "./project.js";
import type { LanceStore } from "./store/lance-store.js";
import type { IndexRecord, IndexStatusCounts, ObjectIndexStatus } from "./types.js";

export interface IndexCounts {
  status: IndexStatusCounts;
  /**
   * Whether READY objects are still to be taken into the built full-text/vector indexes: the worker's
   * last step of a build (searches find them meanwhile; the index stays BUILDING until it is done).
   */
  optimizing: boolean;
}

/** Reasons looked up by id in one query, at most; more are matched against the ids of the objects waiting. */
const ERRORS_BY_ID = 500;

/**
 * Objects in ERROR: those with a recorded reason, but for an object replaced since it failed (its new
 * version waiting, `pending`): that one counts by its new version alone, not twice. A reason is
 * recorded with the batch that failed the object, and dropped when it is deleted or indexed, so any
 * other reason is of an object's current, committed version.
 */
async function errorCount(store: LanceStore, progress: IndexProgress, pending: number): Promise<number> {
  const ids = Object.keys(progress.errors);
  if (ids.length === 0 || pending === 0) return ids.length;
  if (ids.length <= ERRORS_BY_ID) return ids.length - (await store.countObjectsAmong(ids, progress.indexedSeq));
  const waiting = new Set(await store.objectIdsAfter(progress.indexedSeq));
  return ids.filter((id) => !waiting.has(id)).length;
}

/** The counts of an index's objects per state, and whether its build is over (see the file's header). */
export async function indexCounts(ctx: EngineContext, index: IndexRecord): Promise<IndexCounts> {
  // The progress first, the tables after: the worker writes an object's rows before the progress
  // that counts it, so whatever is counted READY here is in every table version read from now on
  // (a search reads its tables after this).
  const progress = await ctx.project.progress(index.id);
  const store = await ctx.store();
  const committed = progress.indexedSeq;
  const claimed = Math.max(committed, progress.processingSeq ?? 0);
  const optimized = Math.min(progress.optimizedSeq, committed);
  const [done, processing, uploaded, unoptimized] = await Promise.all([
    store.countObjects(-1, committed),
    claimed > committed ? store.countObjects(committed, claimed) : 0,
    store.countObjects(claimed),
    optimized < committed ? store.countObjects(optimized, committed) : 0,
  ]);
  const failed = await errorCount(store, progress, processing + uploaded);
  return { status: { UPLOADED: uploaded, PROCESSING: processing, READY: done - failed, ERROR: failed }, optimizing: unoptimized > 0 };
}

/** The counts of an index's objects per state (indexCounts). */
export async function indexStatusCounts(ctx: EngineContext, index: IndexRecord): Promise<IndexStatusCounts> {
  return (await indexCounts(ctx, index)).status;
}

/** All objects an index counts: those stored. */
export function countedObjects(status: IndexStatusCounts): number {
  return status.UPLOADED + status.PROCESSING + status.READY + status.ERROR;
}

/** The state of one stored object (with write sequence `seq`) in one index, by the same rules as indexCounts. */
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
  if (seq <= progress.indexedSeq) status = "READY";
  else if (seq <= (progress.processingSeq ?? 0)) status = "PROCESSING";
  return { id: index.id, status, searchable };
}

/**
 * While an index has objects to take in (UPLOADED or PROCESSING): how many a search finds (READY)
 * of all stored objects; null otherwise. Cheap when the index is caught up (a file read); counts
 * only when it is not.
 */
export async function buildingState(ctx: EngineContext, index: IndexRecord): Promise<{ searchable: number; total: number } | null> {
  const progress = await ctx.project.progress(index.id);
  if (progress.indexedSeq >= (await ctx.project.lastSeq()) && progress.processingSeq === null) return null;
  const { status } = await indexCounts(ctx, index);
  if (status.UPLOADED + status.PROCESSING === 0) return null;
  return { searchable: status.READY, total: countedObjects(status) };
}
