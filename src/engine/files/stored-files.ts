/**
 * The files a project holds objects of: for each stored `path`, the hash of the file its objects
 * were read from and their ids. Read from the object table (every object's body), so it needs no
 * state of its own that could disagree with the objects.
 */
import path from "node:path";
import type { EngineContext } from "../context.js";

export interface StoredFile {
  hash: string;
  /** The file's size and modification time when it was read (RFC 3339), if its objects carry them. */
  size?: number;
  modified?: string;
  ids: string[];
}

/** Objects read per query while scanning. */
const PAGE = 5000;
const HASH = /^[0-9a-f]{64}$/;
/** The hash of a path whose objects disagree: no file has it. */
const MIXED = "mixed";

/** Stored file paths and their objects, from the objects that carry a `path` and a `hash`. */
export async function storedFiles(ctx: EngineContext): Promise<Map<string, StoredFile>> {
  const files = new Map<string, StoredFile>();
  if (!(await ctx.project.exists())) return files;
  const store = (await ctx.store()).snapshot();
  for (let seq = -1; ; ) {
    const rows = await store.objectsAfter(seq, PAGE);
    for (const row of rows) {
      const object = JSON.parse(row.body) as { path?: unknown; hash?: unknown; size?: unknown; modified?: unknown };
      if (typeof object.path !== "string" || typeof object.hash !== "string" || !HASH.test(object.hash)) continue;
      const entry = files.get(object.path);
      if (entry) {
        entry.ids.push(row.id);
        // Objects of one path read from different contents (a change whose step was cut off before its
        // stale objects were deleted): the file must be read again, whatever its size and time say.
        if (entry.hash !== object.hash) Object.assign(entry, { hash: MIXED, size: undefined, modified: undefined });
      } else {
        const size = typeof object.size === "number" ? object.size : undefined;
        const modified = typeof object.modified === "string" ? object.modified : undefined;
        files.set(object.path, { hash: object.hash, size, modified, ids: [row.id] });
      }
    }
    if (rows.length < PAGE) return files;
    seq = (rows.at(-1) as { seq: number }).seq;
  }
}

/** Whether stored path `stored` lies under a walk's scope (`notes/` for a folder, the path itself for a file). */
export function inScope(stored: string, scopes: readonly string[]): boolean {
  return scopes.some((scope) => (scope.endsWith("/") ? stored.startsWith(scope) : stored === scope));
}

/**
 * The stored paths `given` (a file or folder, as typed) names: stored paths equal to, or under, the
 * longest end of its absolute path that names any (`./notes/old.md` names `notes/old.md`, and so does
 * `~/docs/notes/old.md`, and `docs/notes/old.md` if it was added with `docs`). The file need not
 * exist any more.
 */
export function pathsNamed(stored: Iterable<string>, given: string): string[] {
  const absolute = toPosix(path.resolve(given)).replace(/\/+$/, "");
  const segments = absolute.split("/").filter((segment) => segment !== "");
  // The longest end that names something stored, alone: `archive` typed inside `notes` names
  // `notes/archive/…`, never also the folder `archive` added beside `notes`.
  const paths = [...stored];
  for (let i = 0; i < segments.length; i++) {
    const tail = segments.slice(i).join("/");
    const named = paths.filter((candidate) => candidate === tail || candidate.startsWith(`${tail}/`));
    if (named.length > 0) return named;
  }
  return [];
}

function toPosix(file: string): string {
  return path.sep === "/" ? file : file.split(path.sep).join("/");
}
