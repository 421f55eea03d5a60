/**
 * Writes that span several commits are journaled, so that a process killed half-way leaves no
 * half-done state behind:
 * - an add records the object table's version before it; an interrupted add is rolled back to it;
 * - a delete records its ids; an interrupted delete is completed (from the object table, every index
 *   table and every segments table).
 * The next process that opens the project finishes the job before it reads or writes anything.
 */
import { failpoint } from "./failpoint.js";
import { imageTableName, indexTableName, partTables, Project, segmentTableName } from "./project.js";
import type { LanceStore } from "./store/lancedb.js";

/** Whether a journal is left by a process that died (so its work must be undone or completed). */
export function interruptedWorkPending(project: Project): boolean {
  const add = project.unfinishedAdd();
  const del = project.unfinishedDelete();
  return (add !== null && !Project.journalOwnerAlive(add)) || (del !== null && !Project.journalOwnerAlive(del));
}

/** Rolls back an interrupted add and completes an interrupted delete. Call with the write lock held. */
export async function recoverInterrupted(project: Project, store: LanceStore): Promise<void> {
  await rollBackAdd(project, store);
  const del = project.unfinishedDelete();
  if (del) {
    // Objects leave the store first, so a damaged journal is completed by removing from every index
    // the rows of objects that are no longer stored.
    await deleteEverywhere(project, store, del.ids ?? (await rowsWithoutObjects(project, store)));
    project.endDelete();
  }
  project.removeAbandonedSpools();
}

/** Restores the object table to its version before the journaled add, if there is one (write lock held). */
export async function rollBackAdd(project: Project, store: LanceStore): Promise<void> {
  const add = project.unfinishedAdd();
  if (!add) return;
  if (add.objectsVersion === null) throw project.damagedAddJournal();
  if (!(await store.hasObjectsVersion(add.objectsVersion, project.addJournalTime() ?? 0))) {
    throw project.damagedAddJournal(`an objects add was interrupted, and the version its journal names (${add.objectsVersion}) is not one the object store has`);
  }
  await store.restoreObjects(add.objectsVersion);
  project.endAdd();
}

/**
 * Drops index and segment tables that no index in the catalog owns: left by an `index create` or
 * `index delete` killed between writing its tables and the catalog. Call with the write lock held.
 */
export async function dropOrphanTables(project: Project, store: LanceStore): Promise<string[]> {
  const owned = new Set(project.indexes().flatMap((index) => [indexTableName(index.id), segmentTableName(index.id), imageTableName(index.id)]));
  const orphans = (await store.tableNames()).filter((name) => /^(index|segments|images)_idx_/.test(name) && !owned.has(name));
  for (const name of orphans) await store.dropTable(name);
  return orphans;
}

/** Ids that have rows in some index or segments table but are not stored (left by a delete that did not finish). */
async function rowsWithoutObjects(project: Project, store: LanceStore): Promise<string[]> {
  const stored = new Set(await store.objectIds());
  const orphans = new Set<string>();
  for (const index of project.indexes()) {
    for (const id of await store.rowIds(indexTableName(index.id))) if (!stored.has(id)) orphans.add(id);
    for (const table of partTables(index)) for (const id of await store.segmentObjectIds(table)) if (!stored.has(id)) orphans.add(id);
  }
  return [...orphans];
}

/** Removes objects from the object table, every index table and every segments table, and forgets their errors. */
export async function deleteEverywhere(project: Project, store: LanceStore, ids: readonly string[]): Promise<void> {
  await store.deleteObjects(ids);
  failpoint("delete:objects");
  for (const index of project.indexes()) {
    await store.deleteIndexRows(indexTableName(index.id), ids);
    failpoint("delete:index-rows");
    for (const table of partTables(index)) await store.deleteSegmentsOf(table, ids);
    const progress = project.progress(index.id);
    if (ids.some((id) => Object.hasOwn(progress.errors, id))) {
      for (const id of ids) delete progress.errors[id];
      project.saveProgress(index.id, progress);
    }
  }
}
