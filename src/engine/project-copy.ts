/**
 * `semsearch project copy <from> <to>`: a project copied whole, between local directories and
 * buckets in any direction: LanceDB's tables byte for byte, and the state documents (catalog,
 * sequence counter, progress, keys). Index ids, object ids and keys stay the same, and nothing is
 * embedded again.
 *
 * - The copy holds the source's write lock from start to end: writers wait (searches go on), and
 *   it copies a project with no interrupted work (which it finishes first, as any writer does).
 * - A worker may still commit a vector index while the copy runs (it trains one outside the write
 *   lock): the tables' manifests are listed before their files, and copied after them, so every
 *   version copied has every file it names.
 * - It fills a destination that holds nothing, under the destination's write lock. A journal there
 *   (`copy.journal`) says a copy is under way until the catalog, written last, makes the destination
 *   a project; a copy stopped half-way is reported as such by every command there, and running the
 *   same copy again starts it over.
 */
import { readdirSync, realpathSync } from "node:fs";
import path from "node:path";
import type { EngineContext } from "./context.js";
import { ConflictError, EnvironmentError, fsError, NotFoundError, UsageError } from "./errors.js";
import { failpoint } from "./failpoint.js";
import { isBucketAddress } from "./location.js";
import { dataFiles, type DataFile, type DataFiles } from "./project-files.js";
import type { Project } from "./project.js";

export interface CopyProgress {
  /** files copied of `total` */
  done: number;
  total: number;
  bytes: number;
}

export interface CopyResult {
  from: string;
  to: string;
  indexes: number;
  files: number;
  bytes: number;
}

/** Files copied at once (a bucket's requests take a round trip each). */
const PARALLEL = 8;

/** A LanceDB version manifest: what makes a version of a table, after the files it names. */
const isManifest = (key: string) => /(^|\/)_versions\/[^/]+$/.test(key);

/** Whether one of the two places lies inside the other (copying a project into itself). */
function nested(a: string, b: string): boolean {
  const inside = (outer: string, inner: string) => {
    if (isBucketAddress(outer)) return inner === outer || inner.startsWith(`${outer}/`);
    const relative = path.relative(outer, inner);
    return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
  };
  return inside(a, b) || inside(b, a);
}

export async function copyProject(source: EngineContext, target: Project, now: () => Date, onProgress?: (progress: CopyProgress) => void): Promise<CopyResult> {
  const from = source.project;
  if (nested(realPlace(from.dir), realPlace(target.dir))) {
    throw new UsageError("COPY_INTO_ITSELF", `Cannot copy the project ${from.dir} to ${target.dir}: one is inside the other`, { hint: "Copy it to a place outside the project." });
  }
  if (!(await from.exists())) throw new NotFoundError("PROJECT_NOT_FOUND", `There is no project at ${from.dir} to copy`, { hint: "Name the project to copy as --project (or SEMSEARCH_PROJECT) names it." });
  const [sourceFiles, targetFiles] = await Promise.all([dataFiles(from), dataFiles(target)]);
  try {
    await checkEmpty(target, targetFiles, from.dir);
    return await source.locked(() =>
      target.filling(async () => {
        const again = await checkEmpty(target, targetFiles, from.dir); // (again, under the lock: another copy may have got there first)
        // The source is read through and its documents read before anything is written: a damaged
        // table or keys document is refused here, rather than copied (the copy may be the backup).
        await (await source.store()).checkTables();
        const documents = await from.exportDocuments();
        await target.beginCopy(from.dir, now().toISOString());
        // (a copy run again starts over: what the stopped one wrote goes, its temporary files too,
        // whatever the source holds now)
        if (again) await targetFiles.clear();
        const { files, bytes } = await copyFiles(sourceFiles, targetFiles, onProgress);
        failpoint("copy:documents");
        await from.checkWriteLease(); // (a bucket source's lease lost meanwhile: what was copied may not be one state)
        await target.importDocuments(documents);
        failpoint("copy:end");
        await target.endCopy();
        return { from: from.dir, to: target.dir, indexes: (await target.indexes()).length, files, bytes };
      }),
    );
  } finally {
    sourceFiles.close();
    targetFiles.close();
  }
}

/**
 * A local place with its symbolic links resolved (its nearest existing folder's real path, and the
 * rest as named), so that a link into the project is seen to be inside it; a bucket's address as it is.
 */
function realPlace(place: string): string {
  if (isBucketAddress(place)) return place;
  let existing = place;
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(realpathSync(existing), ...rest.reverse());
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) return place;
      rest.push(path.basename(existing));
      existing = parent;
    }
  }
}

/**
 * Refuses a destination that is a project or holds anything, unless it is what a copy of this same
 * source left unfinished: true then (the copy starts over). A copy stopped after it wrote the
 * catalog had finished: its journal is left, and ignored.
 */
async function checkEmpty(target: Project, files: DataFiles, from: string): Promise<boolean> {
  let exists: boolean;
  try {
    exists = await target.exists();
  } catch (error) {
    if (!(error instanceof EnvironmentError && error.code === "COPY_UNFINISHED")) throw error;
    const unfinished = await target.unfinishedCopy();
    if (unfinished?.from === from) return true;
    throw new ConflictError("DESTINATION_NOT_EMPTY", `${target.dir} holds an unfinished copy of ${unfinished?.from ?? "another project"}`, { hint: `Remove ${target.dir}, or copy to another place.` });
  }
  if (exists) throw new ConflictError("PROJECT_EXISTS", `${target.dir} is a project already`, { hint: "Copy to a new place: a copy never merges into a project." });
  // (a local directory that holds anything else: a project's files would be mixed into it; in a
  // bucket, the data and state folders are what a project would be mixed with)
  const held = target.remote ? [...(await files.list()).map((file) => `data/${file.key}`), ...(await target.heldState()).map((name) => `state/${name}`)] : localEntries(target.dir);
  if (held.length > 0) {
    throw new ConflictError("DESTINATION_NOT_EMPTY", `${target.dir} is not empty (it holds ${held[0]}${held.length > 1 ? ` and ${held.length - 1} more` : ""})`, {
      hint: "Copy to a place that holds nothing, or that does not exist yet.",
    });
  }
  return false;
}

/** What a local directory holds, but for the write lock (and its taker's temporary file); none when it does not exist. */
function localEntries(dir: string): string[] {
  try {
    return readdirSync(dir).filter((name) => !/^write\.lock(\.\d+\.[0-9a-f]+\.tmp)?$/.test(name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw fsError(error, "read", dir);
  }
}

/** Copies every data file, the manifests (listed first) last; returns how many files and bytes. */
async function copyFiles(from: DataFiles, to: DataFiles, onProgress?: (progress: CopyProgress) => void): Promise<{ files: number; bytes: number }> {
  const manifests = (await from.list()).filter((file) => isManifest(file.key));
  const rest = (await from.list()).filter((file) => !isManifest(file.key));
  const total = manifests.length + rest.length;
  let done = 0;
  let bytes = 0;
  const copyAll = async (files: DataFile[]) => {
    let next = 0;
    const lane = async () => {
      for (let file = files[next++]; file !== undefined; file = files[next++]) {
        await to.write(file.key, await from.read(file.key), file.size);
        done++;
        bytes += file.size;
        onProgress?.({ done, total, bytes });
        failpoint("copy:file");
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL, files.length) }, lane));
  };
  await copyAll(rest);
  await copyAll(manifests);
  return { files: total, bytes };
}
