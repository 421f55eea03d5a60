/**
 * Recognising a semsearch project's folder among the folders `objects add` walks (issue 40): its
 * files are a project's data (its catalog, its LanceDB tables, the digests of its API keys and the
 * secret they are made with), never documents, whatever the folder is named. A project made with
 * `--project <folder>` is no `.semsearch`, so the name alone cannot tell.
 *
 * A folder is a project's when it holds one of:
 *   - `catalog.json` that is a semsearch catalog (a JSON object with `version` and an `indexes` list);
 *   - `keys.json` that is a semsearch keys file (a JSON object with a `secret` and a `keys` list);
 *   - the object table of a semsearch database, `data/objects.lance/`, beside another of a project's
 *     own names (`progress/`, `seq`, a journal, a lock…): a damaged project, its catalog lost.
 * The contents are checked, not only the names, so that a folder of the user's holding a product
 * `catalog.json` or a `data/` folder is still read.
 */
import { constants } from "node:fs";
import { open, stat } from "node:fs/promises";
import path from "node:path";
import { UsageError } from "../errors.js";

/** The names a project holds at its top (project.ts), besides `data/`. */
const PROJECT_NAMES = ["catalog.json", "keys.json", "progress", "seq", "add.journal", "delete.journal", "index.journal", "copy.journal", "worker.json", "worker.log", "write.lock", "worker.lock"];

/** Larger than this, a `catalog.json` or `keys.json` is not semsearch's (a catalog of 1,000 indexes is about 600 KB). */
const MAX_STATE_BYTES = 16 * 1024 * 1024;

/**
 * What makes folder `dir` a semsearch project's (`catalog.json`, `keys.json` or `data/objects.lance`),
 * or null. `names`: the folder's entries when the caller has listed them already (no look-up is then
 * made for a name that is not there).
 */
export async function projectMark(dir: string, names?: ReadonlySet<string>): Promise<string | null> {
  const has = async (name: string) => (names ? names.has(name) : (await kindOf(path.join(dir, name))) !== null);
  if ((await has("catalog.json")) && (await jsonObject(path.join(dir, "catalog.json"), (value) => "version" in value && Array.isArray(value.indexes)))) return "catalog.json";
  if ((await has("keys.json")) && (await jsonObject(path.join(dir, "keys.json"), (value) => typeof value.secret === "string" && Array.isArray(value.keys)))) return "keys.json";
  if ((await has("data")) && (await kindOf(path.join(dir, "data", "objects.lance"))) === "folder") {
    for (const name of PROJECT_NAMES) if (await has(name)) return "data/objects.lance";
  }
  return null;
}

/**
 * Refuses (UsageError INPUT_IS_PROJECT, exit 2) an input to `objects add` that is a semsearch
 * project's folder, or one of its own files or folders (`<project>/keys.json`, `<project>/progress/…`):
 * what an add reads must never be a project's data. A folder of the user's kept inside a project's
 * folder (`<project>/docs`) is not the project's, and may be named.
 */
export async function refuseProjectData(given: string): Promise<void> {
  const absolute = path.resolve(given);
  const holding = await projectHolding(absolute);
  if (holding === null) return;
  const what = holding.dir === absolute ? `is a semsearch project's folder (it holds ${holding.mark})` : `is part of a semsearch project (its folder ${JSON.stringify(holding.dir)} holds ${holding.mark})`;
  throw new UsageError("INPUT_IS_PROJECT", `${JSON.stringify(given)} ${what}: a project's files are its data, not documents or objects to add; nothing was added`, {
    hint: `Name the folders of documents instead (a folder of yours inside a project's folder can be named). To search that project, give --project ${JSON.stringify(holding.dir)}.`,
  });
}

/** The project folder that `target` (absolute) is, or whose own file or folder it is, and what makes it one; null otherwise. */
async function projectHolding(target: string): Promise<{ dir: string; mark: string } | null> {
  const mark = await projectMark(target);
  if (mark !== null && (await kindOf(target)) === "folder") return { dir: target, mark };
  for (let child = target, dir = path.dirname(target); dir !== child; child = dir, dir = path.dirname(dir)) {
    const name = path.basename(child);
    if (name !== "data" && !PROJECT_NAMES.includes(name)) continue;
    const parentMark = await projectMark(dir);
    if (parentMark !== null) return { dir, mark: parentMark };
  }
  return null;
}

/** The skip reason of a project's folder found in a walk. */
export function projectFolderReason(mark: string): string {
  return `a semsearch project's folder (it holds ${mark}): its files are the project's data, not documents (name a folder inside it to add that folder)`;
}

async function kindOf(file: string): Promise<"file" | "folder" | null> {
  try {
    const info = await stat(file);
    return info.isDirectory() ? "folder" : info.isFile() ? "file" : null;
  } catch {
    return null;
  }
}

/** Whether `file` is a regular file holding a JSON object for which `test` holds (any failure to read it: no). */
async function jsonObject(file: string, test: (value: Record<string, unknown>) => boolean): Promise<boolean> {
  let text: string;
  try {
    // (opened without waiting for a writer: a pipe of that name is not read)
    const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const info = await handle.stat();
      if (!info.isFile() || info.size > MAX_STATE_BYTES) return false;
      text = await handle.readFile("utf8");
    } finally {
      await handle.close();
    }
  } catch {
    return false;
  }
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) && test(value as Record<string, unknown>);
  } catch {
    return false;
  }
}
