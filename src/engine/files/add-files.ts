/**
 * `objects add <folder|file>…` for files (issue 29): walk, read each file that changed since it was
 * stored (by content hash), add their objects, and remove the objects a changed file no longer
 * yields. With `sync` (and in `--watch`), objects of files that are gone from a walked folder are
 * deleted too.
 *
 * Files are added in steps of up to STEP_FILES files (or STEP_BYTES of content); each step is one
 * add, all or nothing, as `objects add` of JSON is. An add stopped part-way (killed, refused) keeps
 * the steps before it, and adding again skips them as unchanged, so a large folder is resumable.
 */
import type { EngineContext } from "../context.js";
import { isImageIndex } from "../config.js";
import { failpoint } from "../failpoint.js";
import { addObjects, type AddObjectsOptions } from "../objects/service.js";
import { deleteObjects } from "../objects/delete.js";
import type { ObjectsInput } from "../objects/input.js";
import { objectId } from "../objects/parse.js";
import type { JsonObject } from "../types.js";
import { UnreadableFile, type SkipKind } from "./document.js";
import { contentHash, fileBytes, fileObjects, type DocumentReader } from "./file-object.js";
import { ReadPool } from "./read-pool.js";
import { inScope, storedFiles } from "./stored-files.js";
import { formatSize, walk, type FoundFile, type SkippedFile, type WalkOptions } from "./walk.js";

/** Files read at once (their reads, hashes and parses run in parallel). */
const READ_WINDOW = 32;
/** Files per step (one journaled add). */
export const STEP_FILES = 1000;
/** Content per step, in bytes. */
export const STEP_BYTES = 64 * 1024 * 1024;
/** Default `--max-file-size`: 10 MiB (PDFs: 5 times as much, their text being a fraction of their bytes). */
export const DEFAULT_MAX_FILE_SIZE = 10 * 1024 * 1024;
export const PDF_SIZE_FACTOR = 5;

/** `moved`: a new file with the content of one gone from the folder (with `sync`): a rename, said as one change. */
export type FileAction = "added" | "replaced" | "moved" | "unchanged" | "deleted" | "skipped";

export interface FileChange {
  action: FileAction;
  path: string;
  /** Objects written or deleted for it. */
  objects: number;
  /** A move's old path. */
  from?: string;
  /** Why it was skipped, for a person; `kind` says it for a program. */
  reason?: string;
  kind?: SkipKind;
}

export interface AddFilesOptions extends Omit<WalkOptions, "skipDirs" | "maxFileSize">, Pick<AddObjectsOptions, "idField" | "generateIds" | "spelling"> {
  maxFileSize?: number;
  /** Delete the objects of files gone from the folders walked (`--sync`, and `--watch`). */
  sync?: boolean;
  /**
   * Files read even when their size and modification time are those stored (`--watch` names the
   * files an event reported): otherwise such a file is taken as unchanged without reading it.
   */
  recheck?: ReadonlySet<string>;
  /** Called once per file with what was done to it, once its step is committed. */
  onChange?: (change: FileChange) => void;
  /** Called as files are done: how many of those the walk found. */
  onProgress?: (done: number, total: number) => void;
  /** Stops the add (`--watch` stopped): the step in progress is committed, the rest left to the next add. */
  signal?: AbortSignal;
}

export interface AddFilesResult {
  /** Objects written. */
  count: number;
  files: Record<FileAction, number>;
  /** Objects deleted: of files gone (sync), and those a changed file no longer yields. */
  deleted: number;
  skipped: SkippedFile[];
  /** Files left out by ignore files and patterns. */
  ignored: number;
  /** Stored files under the walked folders that are gone from them, left in place (no `sync`). */
  gone: number;
}

export async function addFiles(ctx: EngineContext, targets: readonly string[], options: AddFilesOptions, now: Date): Promise<AddFilesResult> {
  const maxFileSize = options.maxFileSize ?? DEFAULT_MAX_FILE_SIZE;
  const walked = await walk(targets, {
    ...options,
    // (PDFs are walked up to their larger limit, and held to it below)
    maxFileSize: maxFileSize * PDF_SIZE_FACTOR,
    skipDirs: ctx.project.remote ? [] : [ctx.project.localDir],
  });
  const result: AddFilesResult = { count: 0, files: { added: 0, replaced: 0, moved: 0, unchanged: 0, deleted: 0, skipped: 0 }, deleted: 0, skipped: [], ignored: walked.ignored, gone: 0 };
  const total = walked.files.length + walked.skipped.length;
  let done = 0;
  const report = (change: FileChange) => {
    result.files[change.action]++;
    if (change.action !== "deleted") options.onProgress?.(++done, total);
    if (change.action === "skipped") result.skipped.push({ path: change.path, reason: change.reason ?? "", kind: change.kind ?? "invalid" });
    options.onChange?.(change);
  };
  for (const skipped of walked.skipped) report({ action: "skipped", path: skipped.path, objects: 0, reason: skipped.reason, kind: skipped.kind });
  const stored = await storedFiles(ctx);
  const imagesWanted = (await ctx.project.indexes()).some((index) => isImageIndex(index.configuration));

  // Stored files gone from the folders walked (a file walked but skipped is still there).
  const present = new Set([...walked.files.map((file) => file.path), ...walked.skipped.map((file) => file.path)]);
  const gone = [...stored].filter(([path]) => inScope(path, walked.scopes) && !present.has(path));
  // With sync, a new file with the content of a gone one is a move (reported once, as one change).
  const goneByHash = new Map(options.sync ? gone.map(([path, entry]) => [entry.hash, path]) : []);
  const movedFrom = new Set<string>();
  // Which file each id belongs to: two files giving one id (a JSON file's object with the id of
  // another file's object, or a document's path) would overwrite each other at every add; the later
  // one in name order is skipped instead. A file gone no longer holds its ids.
  const goneSet = new Set(gone.map(([path]) => path));
  const owners = new Map<string, string>();
  for (const [path, entry] of stored) if (!goneSet.has(path)) for (const id of entry.ids) if (!owners.has(id)) owners.set(id, path);
  const addedIds = new Set<string>(); // ids written by this add: never deleted as another file's stale ones
  const idField = options.idField ?? "id";
  let step: { found: FoundFile; inputs: ObjectsInput[]; kept: Set<string | null>; stale: string[]; count: number; replaced: boolean; from?: string }[] = [];
  let stepBytes = 0;
  const commit = async () => {
    if (step.length === 0) return;
    const added = await addObjects(ctx, step.flatMap((entry) => entry.inputs), { idField: options.idField, generateIds: options.generateIds, spelling: options.spelling }, now);
    result.count += added.count;
    for (const entry of step) for (const id of entry.kept) if (id !== null) addedIds.add(id);
    failpoint("files:added");
    result.deleted += await deleteStored(ctx, step.flatMap((entry) => entry.stale).filter((id) => !addedIds.has(id)));
    for (const entry of step) {
      if (entry.from !== undefined) report({ action: "moved", path: entry.found.path, objects: entry.count, from: entry.from });
      else report({ action: entry.replaced ? "replaced" : "added", path: entry.found.path, objects: entry.count });
    }
    step = [];
    stepBytes = 0;
  };

  // Files are read, hashed and parsed a window at a time, in parallel (documents in the read pool's
  // threads), then handled in walk order.
  let pool: ReadPool | undefined;
  const readInPool: DocumentReader = (kind, bytes, name) => (pool ??= new ReadPool()).read(kind, bytes, name);
  type Outcome = { skipped: string; kind: SkipKind } | { unchanged: true } | { vanished: true } | { read: Awaited<ReturnType<typeof fileObjects>> };
  const prepare = async (found: FoundFile): Promise<Outcome> => {
    const limit = found.kind === "pdf" ? maxFileSize * PDF_SIZE_FACTOR : maxFileSize;
    if (found.size > limit) return { skipped: `${formatSize(found.size)} is over the ${formatSize(limit)} limit (--max-file-size)`, kind: "size" };
    if (found.kind === "image" && !imagesWanted) return { skipped: "an image, and the project has no image index to search it", kind: "image" };
    const before = stored.get(found.path);
    if (before && before.size === found.size && before.modified === found.modified.toISOString() && !options.recheck?.has(found.path)) return { unchanged: true };
    try {
      const bytes = await fileBytes(found);
      if (bytes === null) return { vanished: true };
      const hash = contentHash(bytes);
      if (before && before.hash === hash) return { unchanged: true };
      return { read: await fileObjects(found, bytes, readInPool, hash) };
    } catch (error) {
      if (!(error instanceof UnreadableFile)) throw error;
      return { skipped: error.reason, kind: error.kind };
    }
  };
  try {
    for (let start = 0; start < walked.files.length && !options.signal?.aborted; start += READ_WINDOW) {
      const window = walked.files.slice(start, start + READ_WINDOW);
      const outcomes = await Promise.all(window.map(prepare));
      for (const [i, found] of window.entries()) {
        if (options.signal?.aborted) break;
        const outcome = outcomes[i] as Outcome;
        if ("skipped" in outcome) {
          report({ action: "skipped", path: found.path, objects: 0, reason: outcome.skipped, kind: outcome.kind });
          continue;
        }
        if ("unchanged" in outcome) {
          report({ action: "unchanged", path: found.path, objects: 0 });
          continue;
        }
        if ("vanished" in outcome) {
          // Deleted since the walk: gone, as if deleted before it (not skipped as unreadable, and then
          // deleted by the next reconcile of --watch, which its deletion's event starts: said twice).
          const entry = stored.get(found.path);
          if (entry) gone.push([found.path, entry]);
          options.onProgress?.(++done, total);
          continue;
        }
        const { read } = outcome;
        const before = stored.get(found.path);
        // The ids its earlier objects had that its new content does not give (a row removed from a CSV;
        // every earlier object of a file whose objects have generated ids).
        const kept = new Set(read.objects.map((parsed) => parsed.id ?? ownId(parsed.object, idField)));
        const stale = (before?.ids ?? []).filter((id) => !kept.has(id));
        for (const id of stale) if (owners.get(id) === found.path) owners.delete(id);
        // (an object with a path of its own is stored under that path, so it owns its id under it)
        const claims = read.objects.map((parsed) => ({ id: parsed.id ?? ownId(parsed.object, idField), path: typeof parsed.object.path === "string" ? parsed.object.path : found.path }));
        const taken = claims.find(({ id, path }) => id !== null && (owners.get(id) ?? path) !== path)?.id;
        if (taken != null) {
          report({ action: "skipped", path: found.path, objects: 0, reason: `its object ${JSON.stringify(taken.slice(0, 200))} has the id of an object of ${owners.get(taken)} (ids are one per object across files)`, kind: "id" });
          continue;
        }
        for (const { id, path } of claims) if (id !== null) owners.set(id, path);
        const from = before === undefined ? goneByHash.get(read.hash) : undefined;
        if (from !== undefined) {
          goneByHash.delete(read.hash);
          movedFrom.add(from);
        }
        step.push({ found, inputs: [{ source: found.path, objects: read.objects, base: found.base }], kept, stale, count: read.objects.length, replaced: before !== undefined, ...(from !== undefined ? { from } : {}) });
        stepBytes += found.size;
        if (step.length >= STEP_FILES || stepBytes >= STEP_BYTES) await commit();
      }
    }
  } finally {
    await pool?.close();
  }
  await commit();
  if (options.signal?.aborted) return result; // (files gone are deleted by the next add)

  if (options.sync && gone.length > 0) {
    // One delete for every file gone (not the ids this add wrote: a JSON file renamed gives its objects their ids again).
    const ids = gone.map(([path, entry]) => ({ path, ids: entry.ids.filter((id) => !addedIds.has(id)) }));
    result.deleted += await deleteStored(ctx, ids.flatMap((entry) => entry.ids));
    for (const { path, ids: deleted } of ids) if (!movedFrom.has(path)) report({ action: "deleted", path, objects: deleted.length });
  } else {
    result.gone = gone.length;
  }
  return result;
}

/** An object's own id, or null (a malformed one is refused by the add itself). */
function ownId(object: JsonObject, idField: string): string | null {
  try {
    return objectId(object, idField, "");
  } catch {
    return null;
  }
}

/** Deletes those of `ids` that are still stored; returns how many. */
async function deleteStored(ctx: EngineContext, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const present = await (await ctx.store()).getObjects([...new Set(ids)]);
  if (present.size === 0) return 0;
  return (await deleteObjects(ctx, [...present.keys()])).length;
}
