/** `semsearch objects add <folder|file>…` for files and folders, and its `--watch` (issue 29). */
import { stat } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { ConflictError, Engine, UsageError, type AddFilesResult, type FileChange } from "../../engine/index.js";
import { projectDir, withEngine } from "../options.js";
import { note, printResult } from "../output.js";
import { skippedLine } from "../render/skipped.js";
import { printable } from "../render/style.js";
import { waitForBuild } from "../wait.js";
import { filesProgressReporter } from "../progress.js";
import type { ObjectsAddOptions } from "./objects-commands.js";

export interface FilesAddOptions extends ObjectsAddOptions {
  glob?: string[];
  exclude?: string[];
  ext?: string[];
  maxFileSize?: number;
  sync?: boolean;
  watch?: boolean;
}

/** Whether the flags given only make sense for files and folders. */
export function fileFlagsGiven(options: FilesAddOptions): boolean {
  return options.glob !== undefined || options.exclude !== undefined || options.maxFileSize !== undefined || options.sync === true || options.watch === true;
}

export async function filesAdd(targets: string[], options: FilesAddOptions): Promise<void> {
  if (targets.length === 0) throw new UsageError("NO_INPUT", "Name the folders or files to add (--glob, --exclude, --max-file-size, --sync and --watch are for folders and files)");
  if (targets.includes("-")) throw new UsageError("STDIN_WITH_FILES", "Standard input (-) cannot be added with folders or documents: add it in a command of its own");
  if (options.inputFormat !== undefined) throw new UsageError("INPUT_FORMAT_WITH_FILES", "--input-format is for JSON or CSV inputs; files in folders are read by their extension");
  if (options.watch && options.wait) throw new UsageError("WATCH_AND_WAIT", "--watch runs until stopped: it cannot --wait for the indexes");
  for (const target of targets) {
    try {
      await stat(target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new UsageError("INPUT_UNREADABLE", `Cannot read ${target}: ${code === "ENOENT" ? "no such file or folder" : code === "EACCES" ? "permission denied" : (error as Error).message}`);
    }
  }
  const settings = {
    glob: options.glob,
    exclude: options.exclude,
    textExtensions: options.ext,
    maxFileSize: options.maxFileSize,
    idField: options.idField,
    generateIds: options.generateIds === true,
  };
  await withEngine(options, async (engine) => {
    if (options.watch) return watch(engine, targets, settings, options);
    const progress = filesProgressReporter(options.json);
    let result: AddFilesResult;
    try {
      result = await engine.addFiles(targets, { ...settings, sync: options.sync === true, onProgress: (done, total) => progress.update(done, total) });
    } finally {
      progress.done();
    }
    printResult(options, result, () => summary(result));
    if (result.gone > 0) note(options, `${result.gone} file${result.gone === 1 ? " was" : "s were"} added before and ${result.gone === 1 ? "is" : "are"} now gone from the folder or left out (an ignore file, --glob, --exclude): ${result.gone === 1 ? "its objects stay" : "their objects stay"} (add --sync to delete them).`);
    // (on stderr too, so that skips are seen when the output goes to a pipe or a file)
    const skipped = skippedLine(result.skipped);
    if (skipped !== null) note(options, skipped);
    if (options.wait) for (const index of await engine.listIndexes()) await waitForBuild(engine, index.id, options);
    else if (result.count > 0 && (await engine.listIndexes()).length > 0) note(options, "Indexing continues in the background.");
  });
}

/** What an add did, for a person: the counts, then the files skipped and why. */
function summary(result: AddFilesResult): string {
  const { added, replaced, moved, unchanged, deleted } = result.files;
  const written = added + replaced + moved;
  const parts = [`${result.count} object${result.count === 1 ? "" : "s"} written from ${written} file${written === 1 ? "" : "s"} (${added} new, ${replaced} changed${moved > 0 ? `, ${moved} moved` : ""})`, `${unchanged} unchanged`];
  if (deleted > 0 || result.deleted > 0) parts.push(`${result.deleted} object${result.deleted === 1 ? "" : "s"} deleted`);
  let text = `${parts.join(", ")}.\n`;
  if (result.skipped.length > 0) {
    text += `Skipped ${result.skipped.length} file${result.skipped.length === 1 ? "" : "s"}:\n`;
    for (const { path, reason } of result.skipped) text += `  ${printable(path)}: ${printable(reason)}\n`;
  }
  return text;
}

/**
 * One line per change: on stderr for a person, a JSON line on stdout for a program. A file skipped
 * for the reason already reported is not reported again at each later step.
 */
function changeLine(options: FilesAddOptions, change: FileChange, skipped: Map<string, string>): void {
  if (change.action === "unchanged") return;
  if (change.action === "skipped") {
    if (skipped.get(change.path) === change.reason) return;
    skipped.set(change.path, change.reason ?? "");
  } else skipped.delete(change.path);
  if (options.json) {
    process.stdout.write(`${JSON.stringify(change)}\n`);
    return;
  }
  const time = new Date().toTimeString().slice(0, 8);
  const what = change.action === "skipped" ? `skipped ${printable(change.path)}: ${printable(change.reason ?? "")}` : change.action === "moved" ? `moved ${printable(change.from ?? "")} → ${printable(change.path)}` : `${change.action} ${printable(change.path)}${change.action === "deleted" || change.objects !== 1 ? ` (${change.objects} object${change.objects === 1 ? "" : "s"})` : ""}`;
  process.stderr.write(`${time} ${what}\n`);
}

/**
 * `--watch`: reconciles, then applies changes as they happen until SIGINT or SIGTERM. The first
 * signal lets the step in progress commit, then exits 0; a second exits at once (130), and the next
 * command finishes or undoes what was cut off.
 */
async function watch(engine: Engine, targets: string[], settings: object, options: FilesAddOptions): Promise<void> {
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop.signal.aborted) process.exit(signal === "SIGINT" ? 130 : 143);
    note(options, "Stopping once the change in progress is written…");
    stop.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  // Indexing runs in this process while it watches: a worker that stays, its model loaded, makes a
  // change searchable in a fraction of a second, where a background worker started per change would
  // load the model each time (about 3 s). It has its own engine, as another process would.
  const indexer = new Engine({ projectDir: projectDir(options) });
  const indexing = keepIndexing(indexer, stop.signal, options);
  let first = true; // the first reconcile is reported as a summary, later ones a line per change
  const skipped = new Map<string, string>(); // path → reason reported
  let lastError: string | null = null; // the failure last reported, until a reconcile succeeds
  try {
    await engine.watchFiles(targets, {
      ...settings,
      signal: stop.signal,
      onChange: (change) => {
        if (first) {
          if (change.action === "skipped") skipped.set(change.path, change.reason ?? "");
        } else changeLine(options, change, skipped);
      },
      onReconciled: (result, wasFirst) => {
        lastError = null;
        if (!wasFirst) return;
        first = false;
        if (options.json) process.stdout.write(`${JSON.stringify({ reconciled: result })}\n`);
        else process.stderr.write(summary(result) + `Watching ${targets.map((t) => printable(t)).join(", ")} for changes (Ctrl+C to stop).\n`);
      },
      onError: (error) => {
        const message = error instanceof Error ? error.message : String(error);
        if (message === lastError) return; // (said once while the same failure repeats at each retry)
        lastError = message;
        if (options.json) process.stderr.write(`${JSON.stringify({ warnings: [{ code: "WATCH_STEP_FAILED", message }] })}\n`);
        else process.stderr.write(`${new Date().toTimeString().slice(0, 8)} could not apply the last changes (retrying): ${printable(message)}\n`);
      },
    });
  } finally {
    stop.abort(); // (the indexing too, when the watch ended by an error)
    await indexing;
    await indexer.close();
    process.removeListener("SIGINT", onSignal);
    process.removeListener("SIGTERM", onSignal);
  }
  note(options, "Stopped watching.");
}

/** Waits for another worker to pause between two tries of taking over the indexing. */
const INDEXING_RETRY_MS = 1000;

/**
 * Runs a foreground worker until `signal` aborts. While another worker holds the project (a
 * background one finishing, `semsearch worker`), it tries again every second; a worker that fails is
 * reported and started again.
 */
async function keepIndexing(engine: Engine, signal: AbortSignal, options: FilesAddOptions): Promise<void> {
  while (!signal.aborted) {
    try {
      await engine.runWorker({ signal, pollMs: 200, log: () => {} });
    } catch (error) {
      if (!(error instanceof ConflictError && error.code === "WORKER_RUNNING")) {
        const message = `indexing stopped: ${error instanceof Error ? error.message : String(error)}; it starts again`;
        if (options.json) process.stderr.write(`${JSON.stringify({ warnings: [{ code: "WATCH_INDEXING_FAILED", message }] })}\n`);
        else process.stderr.write(`${new Date().toTimeString().slice(0, 8)} ${printable(message)}\n`);
      }
    }
    await sleep(INDEXING_RETRY_MS, undefined, { signal }).catch(() => undefined);
  }
}
