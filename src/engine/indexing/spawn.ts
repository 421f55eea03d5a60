/** Starting the background worker process. */
import { spawn } from "node:child_process";
import { closeSync, constants, mkdirSync, openSync, unlinkSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { EngineContext } from "../context.js";
import type { Project } from "../project.js";
import { fsError } from "../errors.js";

const WORKER_MAIN = fileURLToPath(new URL("./worker-main.js", import.meta.url));

/**
 * The pid of the live worker, or null (a lock left by a dead worker, or by a pid now reused, is no
 * worker). In a bucket project the worker may run on another machine: its pid is that machine's.
 */
export async function workerPid(project: Project): Promise<number | null> {
  return (await (await project.locks()).worker())?.pid ?? null;
}

/**
 * Opens the worker log for appending, never through a symbolic link: the log is the project's own
 * file, so a link found in its place is removed and a regular file created instead.
 */
function openLog(file: string): number {
  const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;
  try {
    return openSync(file, flags, 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ELOOP") throw fsError(error, "open the worker log", file);
  }
  try {
    unlinkSync(file);
    return openSync(file, flags | constants.O_EXCL, 0o644);
  } catch (error) {
    throw fsError(error, "replace the symbolic link at", file);
  }
}

/** Starts a detached worker unless one is alive; it outlives the command that started it. */
export async function ensureWorker(project: Project): Promise<void> {
  if ((await workerPid(project)) !== null) return;
  if (project.remote) mkdirSync(project.localDir, { recursive: true });
  const log = openLog(project.workerLog);
  try {
    const child = spawn(process.execPath, [WORKER_MAIN, project.dir], {
      detached: true,
      stdio: ["ignore", log, log],
      // glibc gives each of LanceDB's many threads a malloc arena that keeps what it freed: two
      // arenas held the worker's peak at 100,000 objects about 150 MB lower (measured; other C
      // libraries ignore the variable). A value the user set is kept.
      env: { ...process.env, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? "2" },
    });
    child.unref();
  } finally {
    closeSync(log);
  }
}

/** Whether any index has objects it has not indexed or optimized yet (from stored progress alone). */
export async function hasPendingWork(ctx: EngineContext, skip: ReadonlySet<string> = new Set()): Promise<boolean> {
  const indexes = (await ctx.project.indexes()).filter((index) => !skip.has(index.id));
  // A lost or damaged counter hides how far writes got: a worker restores it from stored state and looks.
  if (indexes.length > 0 && !(await ctx.project.seqKnown())) return true;
  const last = await ctx.project.lastSeq();
  for (const index of indexes) {
    const progress = await ctx.project.progress(index.id);
    if (progress.indexedSeq < last || progress.optimizedSeq < progress.indexedSeq) return true;
  }
  return false;
}

/**
 * Starts a worker when work is pending and none runs (a killed worker is resumed by the next
 * command); true when it started one.
 */
export async function resumeWorker(ctx: EngineContext): Promise<boolean> {
  if (ctx.noWorker || !(await ctx.project.exists()) || (await workerPid(ctx.project)) !== null || !(await hasPendingWork(ctx))) return false;
  return startWorker(ctx);
}

/**
 * Starts the worker for work that is committed already: a failure (a read-only project, say) does
 * not undo that work or fail the command, so it becomes a warning. True when a worker was started.
 */
export async function startWorker(ctx: EngineContext): Promise<boolean> {
  if (ctx.noWorker) return false;
  try {
    await ensureWorker(ctx.project);
    return true;
  } catch (error) {
    const message = `The background indexer could not be started: ${error instanceof Error ? error.message : String(error)}. Indexing waits until a command can start it.`;
    ctx.warn({ code: "WORKER_NOT_STARTED", message });
    return false;
  }
}
