/** Starting the background worker process. */
import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { EngineContext } from "../context.js";
import type { Project } from "../project.js";
import { lockOwner, processAlive } from "../lock.js";

const WORKER_MAIN = fileURLToPath(new URL("./worker-main.js", import.meta.url));

/** The pid of the live worker, or null. */
export function workerPid(project: Project): number | null {
  const pid = lockOwner(project.workerLock);
  return pid !== null && processAlive(pid) ? pid : null;
}

/** Starts a detached worker unless one is alive; it outlives the command that started it. */
export function ensureWorker(project: Project): void {
  if (workerPid(project) !== null) return;
  const log = openSync(project.workerLog, "a");
  try {
    const child = spawn(process.execPath, [WORKER_MAIN, project.dir], {
      detached: true,
      stdio: ["ignore", log, log],
      env: process.env,
    });
    child.unref();
  } finally {
    closeSync(log);
  }
}

/** Whether any index has objects it has not indexed or optimized yet (from stored progress alone). */
export function hasPendingWork(ctx: EngineContext): boolean {
  const last = ctx.project.lastSeq();
  return ctx.project.indexes().some((index) => {
    const progress = ctx.project.progress(index.id);
    return progress.indexedSeq < last || progress.optimizedSeq < progress.indexedSeq;
  });
}

/**
 * Starts a worker when work is pending and none runs (a killed worker is resumed by the next
 * command); true when it started one.
 */
export function resumeWorker(ctx: EngineContext): boolean {
  if (!ctx.project.exists() || workerPid(ctx.project) !== null || !hasPendingWork(ctx)) return false;
  ensureWorker(ctx.project);
  return true;
}
