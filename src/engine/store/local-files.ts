/**
 * Everything the store reads of the local file system, in one place: after a failure, the free space
 * and write access of the database's folder (lancedb.ts: environmentFault), and a table's folders and
 * its indexes' files (damage-check.ts). LanceDB itself reads and writes the tables; these checks look
 * beside it, at a folder on this machine, and cannot run on a database in an object store.
 */
import { accessSync, constants as fsConstants, lstatSync, readdirSync, statfsSync } from "node:fs";
import path from "node:path";
import { environmentError, type SemsearchError } from "../errors.js";
import type { TableFault } from "./damage.js";

/** Below this much free space, a failed write is put down to a full disk. */
const LOW_SPACE_BYTES = 64 * 1024 * 1024;

/**
 * A nearly full disk or a directory that cannot be written (read-only file system, permissions) as
 * the reason `error` (what `subject` names failed) happened to the database in `dir`; else null.
 */
export function diskFault(dir: string, error: unknown, subject: string): SemsearchError | null {
  const text = error instanceof Error ? error.message : String(error);
  try {
    const space = statfsSync(dir);
    if (space.bavail * space.bsize < LOW_SPACE_BYTES) return environmentError(Object.assign(new Error(text, { cause: error }), { code: "ENOSPC" }), subject);
    accessSync(dir, fsConstants.W_OK);
  } catch (fault) {
    return environmentError(fault, subject);
  }
  return null;
}

/** The folders LanceDB keeps in a table's directory, made as it needs them. */
const TABLE_FOLDERS = ["_versions", "_transactions", "_indices", "_deletions", "data"];

/**
 * A folder of a table's directory that is there but is not a folder (a file or a link put in its
 * place), or null. Reads need some of them only, but every write makes its files in them, and
 * LanceDB then fails with "File exists", which says nothing of the damage.
 */
export function tableFolderFault(tableDir: string): TableFault | null {
  for (const folder of TABLE_FOLDERS) {
    const where = path.join(tableDir, folder);
    try {
      if (!lstatSync(where).isDirectory()) return { step: "folder", folder };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw environmentError(error, `Cannot read ${where}`) ?? error;
    }
  }
  return null;
}

/** How many files an index's folder holds (0 when it is not there). */
export function indexFiles(folder: string): number {
  try {
    return readdirSync(folder).length;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw environmentError(error, `Cannot read ${folder}`) ?? error;
  }
}
