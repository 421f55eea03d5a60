/**
 * `objects add <folder>… --watch` (issue 29): keeps a project in sync with folders until stopped.
 *
 * The watcher (chokidar, over the system's file events) starts first, then the folders are
 * reconciled with the project (an add with `sync`: new and changed files added, objects of files
 * gone deleted), so nothing that happens meanwhile is missed. After that, file events are gathered
 * until none has come for DEBOUNCE_MS (at most MAX_WAIT_MS after the first), and each such burst is
 * one more reconcile in which the files the events named are read even if their size and time look
 * unchanged. An editor's save by rename, a moved folder, a deleted tree: each is whatever the walk
 * finds afterwards, so the result is exact whichever events the system reports.
 *
 * Every step is an ordinary journaled add or delete: a watcher killed at any point leaves the
 * project as a finished or undone step, and the reconcile of the next start makes it exact.
 */
import path from "node:path";
import type { EngineContext } from "../context.js";
import { addFiles, type AddFilesOptions, type AddFilesResult } from "./add-files.js";
import { IGNORE_FILES, spelledUnder, storedPath } from "./walk.js";

const hidden = (part: string) => part.startsWith(".") || part === "node_modules";

/** Quiet time that ends a burst of events, in ms. */
export const DEBOUNCE_MS = 150;
/** Longest a burst is gathered before it is applied, in ms. */
export const MAX_WAIT_MS = 1000;
/** The longest time between two reconciles of the whole folder, in ms (events a system dropped are found then). */
export const FULL_EVERY_MS = 5 * 60_000;
/** Wait after a failed reconcile before the next try, in ms. */
const RETRY_MS = 2000;

export interface WatchOptions extends AddFilesOptions {
  /** Stops the watch: the reconcile in progress finishes first. */
  signal: AbortSignal;
  /** Called after each reconcile (the first one included). */
  onReconciled?: (result: AddFilesResult, first: boolean) => void;
  /** A reconcile that failed (the watch goes on, and retries). */
  onError?: (error: unknown) => void;
  /** Called once the watcher is listening for events. */
  onReady?: () => void;
}

export async function watchFiles(ctx: EngineContext, targets: readonly string[], options: WatchOptions, now: () => Date): Promise<void> {
  const { watch } = await import("chokidar");
  const roots = targets.map((target) => ({ dir: path.resolve(target), stored: storedPath(target, true).path }));
  const projectDir = ctx.project.remote ? null : path.resolve(ctx.project.localDir);
  // (the project as each folder's paths spell it, when one is reached through a link)
  const projectDirs = projectDir === null ? [] : [projectDir, ...(await Promise.all(roots.map((root) => spelledUnder(root.dir, [projectDir])))).flat()];
  /** A watched file's stored path (`notes/sub/a.md`), or null for one outside the folders. */
  const storedOf = (file: string) => {
    const root = roots.find(({ dir }) => file === dir || file.startsWith(`${dir}${path.sep}`));
    if (!root) return null;
    const relative = path.relative(root.dir, file).split(path.sep).join("/");
    return relative === "" || root.stored === "" ? `${root.stored}${relative}` : `${root.stored}/${relative}`;
  };
  // Other projects' folders the walks found (stored paths): what happens inside them is no change of
  // the folder's (a project being written to would start a reconcile every second). An event of such
  // a folder itself (made again, removed) is one, and its reconcile looks at it again.
  const projects = new Set<string>();
  const inProject = (stored: string | null) => stored !== null && [...projects].some((dir) => stored.startsWith(`${dir}/`));
  // What the walk leaves out is not watched either: hidden files and folders (`.git`, an editor's
  // temporary file: its rename onto the real name is an event of the real name), node_modules, the
  // project, other projects' folders.
  const leftOut = (file: string) => {
    if (projectDirs.some((dir) => file === dir || file.startsWith(`${dir}${path.sep}`))) return true;
    const root = roots.find(({ dir }) => file === dir || file.startsWith(`${dir}${path.sep}`));
    if (!root) return false;
    const parts = path.relative(root.dir, file).split(path.sep);
    if (IGNORE_FILES.includes(parts.at(-1) as string)) return parts.slice(0, -1).some(hidden); // (an edited ignore file changes what is walked)
    return parts.some(hidden) || inProject(storedOf(file));
  };
  const pending = new Set<string>();
  let wake: (() => void) | null = null;
  let firstEventAt = 0;
  let lastEventAt = 0;

  const watcher = watch(
    roots.map((root) => root.dir),
    {
      ignoreInitial: true,
      ignored: leftOut,
      followSymlinks: false,
    },
  );
  const onEvent = (file: string) => {
    const stored = storedOf(file);
    if (stored === null || inProject(stored)) return;
    pending.add(stored);
    lastEventAt = Date.now();
    if (firstEventAt === 0) firstEventAt = lastEventAt;
    wake?.();
  };
  watcher.on("all", (_event, file) => onEvent(file));
  const errors: unknown[] = [];
  watcher.on("error", (error) => errors.push(error));
  await new Promise<void>((resolve) => watcher.once("ready", () => resolve()));
  const stopped = new Promise<void>((resolve) => {
    if (options.signal.aborted) resolve();
    options.signal.addEventListener("abort", () => {
      wake?.();
      resolve();
    });
  });

  let lastFull = 0;
  let fullNeeded = true;
  const reconcile = async (recheck: ReadonlySet<string>, first: boolean) => {
    // Only the paths the events named, unless the whole folder must be looked at: at the start, every
    // FULL_EVERY_MS (events the system dropped), after a watcher error or a failed reconcile, or when an ignore file or a
    // watched folder itself changed (what is walked may have changed everywhere).
    const full = fullNeeded || Date.now() - lastFull > FULL_EVERY_MS || [...recheck].some((file) => roots.some((root) => root.stored === file) || IGNORE_FILES.includes(file.slice(file.lastIndexOf("/") + 1)));
    // (the projects' folders this reconcile looks at are found again, or are projects no more)
    for (const dir of projects) if (full || [...recheck].some((file) => dir === file || dir.startsWith(`${file}/`))) projects.delete(dir);
    const onProjectFolder = (dir: string) => {
      const stored = storedOf(dir);
      if (stored !== null) projects.add(stored);
    };
    const result = await addFiles(ctx, targets, { ...options, sync: true, recheck, onProjectFolder, ...(full ? {} : { only: recheck }) }, now());
    if (full) [lastFull, fullNeeded] = [Date.now(), false];
    options.onReconciled?.(result, first);
  };
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => (wake = null));

  try {
    options.onReady?.();
    let first = true;
    let failed = false;
    while (!options.signal.aborted) {
      if (!first) {
        // Wait for an event, then for the burst to end.
        if (pending.size === 0 && !failed) await Promise.race([sleep(60_000), stopped]);
        if (options.signal.aborted) break;
        if (pending.size === 0 && !failed && Date.now() - lastFull <= FULL_EVERY_MS) continue;
        for (;;) {
          const since = Date.now() - lastEventAt;
          const total = Date.now() - firstEventAt;
          if (since >= DEBOUNCE_MS || total >= MAX_WAIT_MS || options.signal.aborted) break;
          await sleep(Math.min(DEBOUNCE_MS - since, MAX_WAIT_MS - total));
        }
      }
      const recheck = new Set(pending);
      pending.clear();
      firstEventAt = 0;
      try {
        await reconcile(recheck, first);
        failed = false;
      } catch (error) {
        options.onError?.(error);
        for (const file of recheck) pending.add(file);
        failed = true;
        // The retry looks at the whole folder: what happened meanwhile may have no event (a watched
        // folder deleted and made again is not reported at once, and its new files never are).
        fullNeeded = true;
        if (first) throw error; // a first reconcile that fails (no such folder, a refused add) ends the watch
        await Promise.race([sleep(RETRY_MS), stopped]);
      }
      first = false;
      for (const error of errors.splice(0)) {
        options.onError?.(error);
        fullNeeded = true;
      }
    }
  } finally {
    await watcher.close();
  }
}
