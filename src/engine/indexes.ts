/** Index operations: create, list, get, status, delete, wait. */
import { setTimeout as sleep } from "node:timers/promises";
import { parseCreateIndexBody } from "./config.js";
import type { EngineContext } from "./context.js";
import { resolveModel, DEFAULT_MODEL } from "./embedding/registry.js";
import { NotFoundError, ValidationError, InternalError } from "./errors.js";
import { failpoint } from "./failpoint.js";
import { dropOrphanTables } from "./journals.js";
import { newIndexId } from "./ids.js";
import { ensureWorker, workerPid } from "./indexing/spawn.js";
import { highlightsEnabled } from "./indexing/extract.js";
import { indexTableName, segmentTableName } from "./project.js";
import { indexedObjectCount, indexStatusCounts } from "./status.js";
import type { IndexInfo, IndexRecord, IndexStatusCounts } from "./types.js";

/** Creates an index from a create-index request body and starts building it in the background. */
export async function createIndex(ctx: EngineContext, body: unknown, now: Date): Promise<{ id: string }> {
  const { configuration } = parseCreateIndexBody(body);
  if (configuration.index_type.name === "image") {
    throw new ValidationError("UNSUPPORTED_INDEX_TYPE", 'Index type "image" needs an image embedding model, which this version does not ship yet', {
      issues: [{ path: "configuration.index_type.name", message: "image indexes are not available yet" }],
    });
  }
  const model = resolveModel(configuration.model ?? DEFAULT_MODEL);
  const record: IndexRecord = {
    id: newIndexId(),
    configuration,
    model: model.id,
    dimension: model.dimension,
    created_at: now.toISOString(),
  };
  const store = await ctx.store();
  await ctx.locked(async () => {
    await dropOrphanTables(ctx.project, store);
    await store.createIndexTable(indexTableName(record.id), record.dimension);
    if (highlightsEnabled(configuration)) await store.createSegmentTable(segmentTableName(record.id), record.dimension);
    failpoint("index-create:tables");
    ctx.project.saveIndexes([...ctx.project.indexes(), record]);
  });
  ensureWorker(ctx.project);
  return { id: record.id };
}

/** The catalog entry of an index; NotFoundError INDEX_NOT_FOUND otherwise. */
export function findIndex(ctx: EngineContext, id: string): IndexRecord {
  const index = ctx.project.indexes().find((candidate) => candidate.id === id);
  if (!index) {
    const known = ctx.project.indexes().map((candidate) => candidate.id);
    throw new NotFoundError("INDEX_NOT_FOUND", `Index "${id}" not found`, {
      hint: known.length ? `Known indexes: ${known.join(", ")}` : "This project has no indexes yet: `semsearch index create`.",
    });
  }
  return index;
}

function isBuilding(status: IndexStatusCounts): boolean {
  return status.UPLOADED + status.PROCESSING > 0;
}

export async function describeIndex(ctx: EngineContext, index: IndexRecord): Promise<IndexInfo> {
  const status = await indexStatusCounts(ctx, index);
  return { ...index, state: isBuilding(status) ? "BUILDING" : "READY", status };
}

export async function listIndexes(ctx: EngineContext): Promise<IndexInfo[]> {
  if (!ctx.project.exists()) return [];
  return Promise.all(ctx.project.indexes().map((index) => describeIndex(ctx, index)));
}

export async function deleteIndex(ctx: EngineContext, id: string): Promise<void> {
  findIndex(ctx, id);
  const store = await ctx.store();
  await ctx.locked(async () => {
    ctx.project.saveIndexes(ctx.project.indexes().filter((index) => index.id !== id));
    failpoint("index-delete:catalog");
    await store.dropTable(indexTableName(id));
    await store.dropTable(segmentTableName(id));
    ctx.project.removeProgress(id);
    await dropOrphanTables(ctx.project, store);
  });
}

/** Progress of a build, for `--wait`. */
export interface BuildProgress {
  indexId: string;
  done: number;
  total: number;
}

/**
 * Waits until an index has no UPLOADED or PROCESSING objects, restarting the worker if it died.
 * @param onProgress called after each poll
 */
export async function waitForIndex(
  ctx: EngineContext,
  id: string,
  onProgress: (progress: BuildProgress) => void = () => {},
  pollMs = 200,
): Promise<IndexInfo> {
  let restarts = 0;
  let lastDone = -1;
  let lastStart = 0;
  while (true) {
    const index = findIndex(ctx, id);
    const info = await describeIndex(ctx, index);
    const total = info.status.READY + info.status.ERROR + info.status.UPLOADED + info.status.PROCESSING;
    const done = Math.min(total, await indexedObjectCount(ctx, index));
    onProgress({ indexId: id, done, total });
    if (info.state === "READY") return info;
    if (done > lastDone) restarts = 0;
    lastDone = done;
    // A worker takes a moment to start and take its lock: respawn only one that has had time to.
    if (workerPid(ctx.project) === null && Date.now() - lastStart > 3000) {
      lastStart = Date.now();
      if (++restarts > 5) {
        throw new InternalError("WORKER_FAILED", `The background worker keeps stopping without progress; see ${ctx.project.workerLog}`);
      }
      ensureWorker(ctx.project);
    }
    await sleep(pollMs);
  }
}
