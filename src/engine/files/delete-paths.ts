/** `objects delete --path <file|folder>…`: the objects read from those files, all or none (delete.ts). */
import type { EngineContext } from "../context.js";
import { NotFoundError } from "../errors.js";
import { deleteObjects } from "../objects/delete.js";
import { pathsNamed, storedFiles } from "./stored-files.js";

/** Deletes every object whose stored `path` a given path names (stored-files.ts); returns their ids. */
export async function deletePaths(ctx: EngineContext, given: readonly string[]): Promise<string[]> {
  const stored = await storedFiles(ctx);
  const ids: string[] = [];
  for (const one of given) {
    const named = pathsNamed(stored.keys(), one);
    if (named.length === 0) throw new NotFoundError("PATH_NOT_FOUND", `No stored object was read from ${JSON.stringify(one.slice(0, 300))} (or from a file under it): nothing was deleted`);
    for (const file of named) ids.push(...(stored.get(file)?.ids ?? []));
  }
  return deleteObjects(ctx, ids);
}
