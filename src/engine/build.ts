/** Waiting for an index to be built (`--wait`), and what a finished build reports. */
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { isImageIndex } from "./config.js";
import type { EngineContext } from "./context.js";
import { ConflictError, EnvironmentError, errorFromPayload, InternalError } from "./errors.js";
import { describeIndex, findIndex, missingFieldsWarning } from "./indexes.js";
import { ensureWorker, workerPid } from "./indexing/spawn.js";
import { imageTableName, indexTableName } from "./project.js";
import { countedObjects } from "./status.js";
import type { IndexInfo, IndexRecord, IndexStatusCounts } from "./types.js";
import { verifyModelFiles } from "./embedding/model-cache.js";
import { indexModel } from "./embedding/registry.js";

/** Progress of a build, for `--wait`. */
export interface BuildProgress {
  indexId: string;
  /** objects the build is over for: READY or ERROR */
  done: number;
  /** all stored objects */
  total: number;
  /** the index's counts per state, as `index status` shows them (status.ts) */
  status?: IndexStatusCounts;
  /** What the worker reports doing on this index: `indexing` (embedding and writing objects) or `optimizing` (building its search indexes); absent when no worker reports on it. */
  phase?: "indexing" | "optimizing";
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

/**
 * Ends a wait on an index the worker cannot build because its model is unavailable: with the
 * model check's own error when the files are still missing or changed, or with what the worker
 * found when it blocked the index during this wait. A block recorded before the wait whose model
 * checks out again is stale: the worker retries and the wait goes on.
 */
async function checkBlocked(ctx: EngineContext, index: IndexRecord, started: number): Promise<void> {
  const blocked = (await ctx.project.progress(index.id)).blocked;
  if (!blocked) return;
  await verifyModelFiles(indexModel(index));
  if (Date.parse(blocked.at) >= started) {
    throw errorFromPayload({ name: blocked.name ?? "EnvironmentError", code: blocked.code, message: `Index ${index.name ?? index.id} cannot be built: ${blocked.message}`, ...(blocked.hint ? { hint: blocked.hint } : {}) });
  }
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
    const index = await findIndex(ctx, id);
    const info = await describeIndex(ctx, index);
    const { status } = info;
    const total = countedObjects(status);
    const done = status.READY + status.ERROR;
    const worker = await ctx.project.workerState().catch(() => null);
    const phase = worker?.index === index.id && worker.phase !== "idle" ? worker.phase : undefined;
    onProgress({ indexId: id, done, total, status, ...(phase ? { phase } : {}) });
    if (info.state === "READY") return info;
    await checkBlocked(ctx, index, started);
    if (done > lastDone) restarts = 0;
    lastDone = done;
    const key = `${done}|${status.ERROR}|${status.READY}|${(await ctx.project.workerState())?.updated_at ?? ""}`;
    if (key !== lastKey) [lastKey, lastChange] = [key, Date.now()];
    const state = `${status.READY.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} objects searchable${status.ERROR > 0 ? `, ${status.ERROR.toLocaleString("en-US")} failed` : ""}`;
    if (timeoutMs !== undefined && Date.now() - started > timeoutMs) {
      throw new ConflictError("WAIT_TIMEOUT", `Index ${id} is not built after ${seconds(timeoutMs)} (${state})`, {
        hint: `It goes on building in the background: \`semsearch index status ${id}\`.`,
      });
    }
    if (Date.now() - lastChange > stallMs) {
      const pid = await workerPid(ctx.project);
      throw new ConflictError("WAIT_STALLED", `Index ${id} made no progress for ${seconds(stallMs)} (${state}); the background worker ${pid === null ? "is not running" : `(pid ${pid}) does not respond`}`, {
        hint: `See ${ctx.project.workerLog}. ${pid === null ? "" : `Stopping it (kill ${pid}) lets the next command start a new one.`}`.trim(),
      });
    }
    // A worker takes a moment to start and take its lock: respawn only one that has had time to.
    if (!ctx.noWorker && (await workerPid(ctx.project)) === null && Date.now() - lastStart > 3000) {
      lastStart = Date.now();
      if (++restarts > 5) {
        const failure = lastWorkerFailure(ctx);
        const message = `The background worker keeps stopping without progress${failure ? `: ${failure.message}` : ""}`;
        const hint = `See ${ctx.project.workerLog}.`;
        if (failure?.name === "EnvironmentError") throw new EnvironmentError(failure.code, message, { hint });
        throw new InternalError("WORKER_FAILED", message, { hint });
      }
      await ensureWorker(ctx.project);
    }
    await sleep(pollMs);
  }
}

/** What `--wait` reports when a build is over: objects that failed (the first few reasons) and objects with no searchable text. */
export interface BuildReport {
  errors: { count: number; first: { id: string; message: string }[] };
  /** objects indexed with nothing to search: empty searchable text (and, in an image index, no image) */
  withoutText: number;
  /** when some objects have no searchable text: fields of the configuration that no sampled object has */
  missingFields?: string;
}

export async function buildReport(ctx: EngineContext, idOrName: string, first = 5): Promise<BuildReport> {
  const index = await findIndex(ctx, idOrName);
  const errors = Object.entries((await ctx.project.progress(index.id)).errors).sort(([, a], [, b]) => a.seq - b.seq);
  const store = await ctx.store();
  let withoutText = await store.countRows(indexTableName(index.id), "text = ''");
  if (withoutText > 0 && isImageIndex(index.configuration)) {
    const empty = await store.idsWhere(indexTableName(index.id), "text = ''");
    const pictured = await store.partObjectsOf(imageTableName(index.id), empty);
    withoutText = empty.filter((id) => !pictured.has(id)).length;
  }
  const missing = withoutText > 0 ? await missingFieldsWarning(ctx, index.configuration) : null;
  return {
    errors: { count: errors.length, first: errors.slice(0, first).map(([objectId, error]) => ({ id: objectId, message: error.message })) },
    withoutText,
    ...(missing ? { missingFields: missing } : {}),
  };
}
