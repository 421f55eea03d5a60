/**
 * Deleting objects: one, many by id, or every object a filter matches in an index. One locked step,
 * journaled with every id, so a delete is all or nothing: interrupted half-way (killed, or failed
 * after objects left the store), the next process that opens the project completes it; one that
 * failed before it removed anything leaves no journal. Ids that are not stored refuse the whole
 * delete (exit 3), before anything is removed.
 */
import type { EngineContext } from "../context.js";
import { ConflictError, NotFoundError, ValidationError } from "../errors.js";
import { failpoint } from "../failpoint.js";
import { fieldResolver } from "../filter-fields.js";
import { findIndex } from "../indexes.js";
import { deleteEverywhere } from "../journals.js";
import { currentOwner } from "../owner.js";
import { indexTableName } from "../project.js";
import { compileFilter } from "../search/filters.js";
import { parseFilter } from "../search/filter-syntax.js";
import { buildingState } from "../status.js";
import { filterInForm, textForm } from "../text-form.js";

/** Ids one delete takes at most (its journal holds them all). */
export const MAX_DELETE_IDS = 1_000_000;

/** Removes `ids` (stored, distinct) from the store and every index, in one locked, journaled step. */
async function deleteStored(ctx: EngineContext, ids: readonly string[]): Promise<void> {
  const store = await ctx.store();
  await ctx.locked(async () => {
    await ctx.project.beginDelete(currentOwner(), [...ids]);
    failpoint("delete:journal");
    try {
      await deleteEverywhere(ctx.project, store, ids);
    } catch (error) {
      if ((await store.getObjects(ids)).size === ids.length) await ctx.project.endDelete(); // nothing was removed: nothing to complete
      throw error;
    }
    await ctx.project.endDelete();
  });
}

/**
 * Deletes the objects `ids` (repeats count once): all of them, or none when one is not stored
 * (NotFoundError naming the first missing ones). Returns the ids deleted, in the order given.
 */
export async function deleteObjects(ctx: EngineContext, ids: readonly string[]): Promise<string[]> {
  const distinct = [...new Set(ids)];
  if (distinct.length === 0) throw new ValidationError("NO_IDS", "No object ids to delete: give ids as arguments, one per line on standard input (-), or --filter");
  if (distinct.length > MAX_DELETE_IDS) throw new ValidationError("TOO_MANY_IDS", `${distinct.length} ids: one delete takes at most ${MAX_DELETE_IDS.toLocaleString("en-US")}; split them`);
  // (an id no object can have, empty or holding NUL, is not stored; SQL literals cannot carry a NUL)
  const queried = distinct.filter((id) => id !== "" && !id.includes("\u0000"));
  const stored = (await ctx.project.exists()) && queried.length > 0 ? await (await ctx.store()).getObjects(queried) : new Map();
  const missing = distinct.filter((id) => !stored.has(id));
  if (missing.length > 0) {
    const named = missing.slice(0, 5).map((id) => JSON.stringify(id.slice(0, 200))).join(", ");
    throw new NotFoundError("OBJECT_NOT_FOUND", distinct.length === 1 ? `Object ${named} not found` : `${missing.length} of the ${distinct.length} ids are not stored: ${named}${missing.length > 5 ? ", …" : ""}; nothing was deleted`);
  }
  await deleteStored(ctx, distinct);
  return distinct;
}

/**
 * The ids of the objects `filter` matches in index `indexId` (its filterable fields, as `search
 * --filter` reads them). Refused while the index is building: objects not indexed yet would escape it.
 */
export async function objectsMatching(ctx: EngineContext, indexId: string, filter: string): Promise<string[]> {
  const index = await findIndex(ctx, indexId);
  const node = parseFilter(filter);
  if (node === null) throw new ValidationError("EMPTY_FILTER", "The filter is empty: to delete every object, name them (or delete the project)");
  const building = await buildingState(ctx, index);
  if (building) {
    throw new ConflictError("INDEX_BUILDING", `Index ${index.id} is still building (${building.searchable} of ${building.total} objects searchable): a filter would miss the others`, {
      hint: `Wait for it (semsearch index status ${index.id} --wait), then delete again.`,
    });
  }
  const store = (await ctx.store()).snapshot();
  const table = indexTableName(index.id);
  const where = compileFilter(filterInForm(node, textForm(index)), fieldResolver(index.configuration, await store.filterColumns(table)));
  return [...new Set(await store.rowIds(table, where))];
}
