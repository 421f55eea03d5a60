/** Index operations: create, list, get, status, delete, wait. */
import { setTimeout as sleep } from "node:timers/promises";
import { parseCreateIndexBody, type IndexConfiguration } from "./config.js";
import { fieldPaths, missingFieldsMessage, namedFields } from "./field-presence.js";
import type { EngineContext } from "./context.js";
import { resolveModel, DEFAULT_MODEL } from "./embedding/registry.js";
import { readFileSync } from "node:fs";
import { ConflictError, EnvironmentError, NotFoundError, ValidationError, InternalError } from "./errors.js";
import { failpoint } from "./failpoint.js";
import { dropOrphanTables } from "./journals.js";
import { newIndexId } from "./ids.js";
import { ensureWorker, startWorker, workerPid } from "./indexing/spawn.js";
import { highlightsEnabled } from "./indexing/extract.js";
import { indexTableName, segmentTableName } from "./project.js";
import { indexedObjectCount, indexStatusCounts } from "./status.js";
import type { IndexInfo, IndexRecord, IndexStatusCounts, JsonObject } from "./types.js";

/** Creates an index from a create-index request body and starts building it in the background. */
export async function createIndex(ctx: EngineContext, body: unknown, now: Date): Promise<{ id: string }> {
  const { configuration, name } = parseCreateIndexBody(body);
  if (configuration.index_type.name === "image") {
    throw new ValidationError("UNSUPPORTED_INDEX_TYPE", 'Index type "image" needs an image embedding model, which this version does not ship yet', {
      issues: [{ path: "configuration.index_type.name", message: "image indexes are not available yet" }],
    });
  }
  const model = resolveModel(configuration.model ?? DEFAULT_MODEL);
  const record: IndexRecord = {
    id: newIndexId(),
    ...(name === undefined ? {} : { name }),
    configuration,
    model: model.id,
    dimension: model.dimension,
    created_at: now.toISOString(),
  };
  const store = await ctx.store();
  await ctx.locked(async () => {
    if (name !== undefined && ctx.project.indexes().some((index) => index.name === name)) {
      throw new ConflictError("INDEX_NAME_TAKEN", `An index named "${name}" exists already`, {
        hint: "Index names are unique: choose another, or delete the other index first.",
      });
    }
    await dropOrphanTables(ctx.project, store);
    await store.createIndexTable(indexTableName(record.id), record.dimension);
    if (highlightsEnabled(configuration)) await store.createSegmentTable(segmentTableName(record.id), record.dimension);
    failpoint("index-create:tables");
    ctx.project.saveIndexes([...ctx.project.indexes(), record]);
  });
  startWorker(ctx);
  const missing = await missingFieldsWarning(ctx, configuration);
  if (missing) ctx.warn({ code: "FIELD_NOT_FOUND", message: missing });
  return { id: record.id };
}

/** Objects sampled to check that the fields a configuration names exist. */
const FIELD_SAMPLE = 1000;

/** A warning naming fields of the configuration that no sampled stored object has (likely typos), or null. */
async function missingFieldsWarning(ctx: EngineContext, configuration: IndexConfiguration): Promise<string | null> {
  if (namedFields(configuration).length === 0) return null;
  const store = await ctx.store();
  const sample = await store.sampleObjects(FIELD_SAMPLE);
  const found = new Map<string, number>();
  for (const row of sample) fieldPaths(JSON.parse(row.body) as JsonObject, found);
  return missingFieldsMessage(configuration, found, sample.length, sample.length < FIELD_SAMPLE ? sample.length : await store.countObjects());
}

/** The catalog entry of an index, by id or name; NotFoundError INDEX_NOT_FOUND otherwise. */
export function findIndex(ctx: EngineContext, id: string): IndexRecord {
  const index = ctx.project.indexes().find((candidate) => candidate.id === id || (candidate.name !== undefined && candidate.name === id));
  if (!index) {
    const known = ctx.project.indexes().map((candidate) => candidate.name ?? candidate.id);
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

export async function deleteIndex(ctx: EngineContext, idOrName: string): Promise<string> {
  const { id } = findIndex(ctx, idOrName);
  const store = await ctx.store();
  await ctx.locked(async () => {
    ctx.project.saveIndexes(ctx.project.indexes().filter((index) => index.id !== id));
    failpoint("index-delete:catalog");
    await store.dropTable(indexTableName(id));
    await store.dropTable(segmentTableName(id));
    ctx.project.removeProgress(id);
    await dropOrphanTables(ctx.project, store);
  });
  return id;
}

/** Progress of a build, for `--wait`. */
export interface BuildProgress {
  indexId: string;
  done: number;
  total: number;
}

export interface WaitOptions {
  /** called after each poll */
  onProgress?: (progress: BuildProgress) => void;
  /** give up (ConflictError WAIT_TIMEOUT, exit 5) after this long; default: no limit while the build progresses */
  timeoutMs?: number;
  /** give up (ConflictError WAIT_STALLED) when neither the build nor the worker's heartbeat moves for this long (default 10 minutes) */
  stallMs?: number;
  pollMs?: number;
}

/** The last failure the worker logged (`worker failed [<class> <code>]: <message>`), if any. */
function lastWorkerFailure(ctx: EngineContext): { name: string; code: string; message: string } | null {
  let text: string;
  try {
    text = readFileSync(ctx.project.workerLog, "utf8").slice(-20_000);
  } catch {
    return null;
  }
  const matches = [...text.matchAll(/worker failed \[(\w+) (\w+)\]: (.*)/g)];
  const last = matches.at(-1);
  return last ? { name: last[1] as string, code: last[2] as string, message: last[3] as string } : null;
}

function seconds(ms: number): string {
  return ms >= 120_000 ? `${Math.round(ms / 60_000)} minutes` : `${Math.round(ms / 1000)} s`;
}

/**
 * Waits until an index has no UPLOADED or PROCESSING objects, restarting the worker if it died.
 * Every wait ends: built; after `timeoutMs`; when nothing (progress or the worker's heartbeat) moves
 * for `stallMs`; or when the worker keeps dying without progress (with the reason it logged).
 */
export async function waitForIndex(ctx: EngineContext, id: string, options: WaitOptions = {}): Promise<IndexInfo> {
  const { onProgress = () => {}, timeoutMs, stallMs = 10 * 60_000, pollMs = 200 } = options;
  const started = Date.now();
  let restarts = 0;
  let lastDone = -1;
  let lastStart = 0;
  let lastChange = Date.now();
  let lastKey = "";
  while (true) {
    const index = findIndex(ctx, id);
    const info = await describeIndex(ctx, index);
    const total = info.status.READY + info.status.ERROR + info.status.UPLOADED + info.status.PROCESSING;
    const done = Math.min(total, await indexedObjectCount(ctx, index));
    onProgress({ indexId: id, done, total });
    if (info.state === "READY") return info;
    if (done > lastDone) restarts = 0;
    lastDone = done;
    const key = `${done}|${info.status.ERROR}|${info.status.READY}|${ctx.project.workerState()?.updated_at ?? ""}`;
    if (key !== lastKey) [lastKey, lastChange] = [key, Date.now()];
    const state = `${done.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} objects indexed`;
    if (timeoutMs !== undefined && Date.now() - started > timeoutMs) {
      throw new ConflictError("WAIT_TIMEOUT", `Index ${id} is not built after ${seconds(timeoutMs)} (${state})`, {
        hint: `It goes on building in the background: \`semsearch index status ${id}\`.`,
      });
    }
    if (Date.now() - lastChange > stallMs) {
      const pid = workerPid(ctx.project);
      throw new ConflictError("WAIT_STALLED", `Index ${id} made no progress for ${seconds(stallMs)} (${state}); the background worker ${pid === null ? "is not running" : `(pid ${pid}) does not respond`}`, {
        hint: `See ${ctx.project.workerLog}. ${pid === null ? "" : `Stopping it (kill ${pid}) lets the next command start a new one.`}`.trim(),
      });
    }
    // A worker takes a moment to start and take its lock: respawn only one that has had time to.
    if (workerPid(ctx.project) === null && Date.now() - lastStart > 3000) {
      lastStart = Date.now();
      if (++restarts > 5) {
        const failure = lastWorkerFailure(ctx);
        const message = `The background worker keeps stopping without progress${failure ? `: ${failure.message}` : ""}`;
        const hint = `See ${ctx.project.workerLog}.`;
        if (failure?.name === "EnvironmentError") throw new EnvironmentError(failure.code, message, { hint });
        throw new InternalError("WORKER_FAILED", message, { hint });
      }
      ensureWorker(ctx.project);
    }
    await sleep(pollMs);
  }
}

/** What `--wait` reports when a build is over: objects that failed (the first few reasons) and objects with no searchable text. */
export interface BuildReport {
  errors: { count: number; first: { id: string; message: string }[] };
  /** objects indexed whose searchable text is empty (only their vector of "" represents them) */
  withoutText: number;
  /** when some objects have no searchable text: fields of the configuration that no sampled object has */
  missingFields?: string;
}

export async function buildReport(ctx: EngineContext, idOrName: string, first = 5): Promise<BuildReport> {
  const index = findIndex(ctx, idOrName);
  const errors = Object.entries(ctx.project.progress(index.id).errors).sort(([, a], [, b]) => a.seq - b.seq);
  const store = await ctx.store();
  const withoutText = await store.countRows(indexTableName(index.id), "text = ''");
  const missing = withoutText > 0 ? await missingFieldsWarning(ctx, index.configuration) : null;
  return {
    errors: { count: errors.length, first: errors.slice(0, first).map(([objectId, error]) => ({ id: objectId, message: error.message })) },
    withoutText,
    ...(missing ? { missingFields: missing } : {}),
  };
}
