/**
 * Writes that span several commits are journaled, so that a process killed half-way leaves no
 * half-done state behind:
 * - an add records the object table's version before it; an interrupted add is rolled back to it;
 * - a delete records its ids; an interrupted delete is completed (from the object table, every index
 *   table and every segments table);
 * - an index create or delete records the index and its tables; an interrupted create is undone
 *   (its tables dropped, unless the catalog lists the index: then it had finished), an interrupted
 *   delete is completed.
 * The next process that opens the project finishes the job before it reads or writes anything.
 * These journals are the only reason a table is ever dropped: a table that no journal names is kept,
 * whatever the catalog says (a catalog lost or restored from an old backup must not cost an index).
 */
import { failpoint } from "./failpoint.js";
import { indexTableName, partTables, Project } from "./project.js";
import type { LanceStore } from "./store/lance-store.js";

/** Whether a journal is left by a process that died (so its work must be undone or completed). */
export async function interruptedWorkPending(project: Project): Promise<boolean> {
  // (read together: in a bucket, each is a request)
  const [add, del, index] = await Promise.all([project.unfinishedAdd(), project.unfinishedDelete(), project.unfinishedIndexWork()]);
  for (const journal of [add, del, index]) if (journal !== null && !(await project.journalOwnerAlive(journal))) return true;
  return false;
}

/**
 * Finishes an interrupted index create or delete, rolls back an interrupted add and completes an
 * interrupted delete. Call with the write lock held. Index work goes first: it touches no object, and
 * an index deleted here is no longer among those a delete of objects must reach (whose tables may be
 * what keeps that delete from finishing).
 */
export async function recoverInterrupted(project: Project, store: LanceStore): Promise<void> {
  await finishIndexWork(project, store);
  await rollBackAdd(project, store);
  const del = await project.unfinishedDelete();
  if (del) {
    // Objects leave the store first, so a damaged journal is completed by removing from every index
    // the rows of objects that are no longer stored.
    await deleteEverywhere(project, store, del.ids ?? (await rowsWithoutObjects(project, store)));
    await project.endDelete();
  }
  project.removeAbandonedSpools();
}

/** Restores the object table to its version before the journaled add, if there is one (write lock held). */
export async function rollBackAdd(project: Project, store: LanceStore): Promise<void> {
  const add = await project.unfinishedAdd();
  if (!add) return;
  if (add.objectsVersion === null) throw await project.damagedAddJournal();
  if (!(await store.hasObjectsVersion(add.objectsVersion, (await project.addJournalTime()) ?? 0))) {
    throw await project.damagedAddJournal(`an objects add was interrupted, and the version its journal names (${add.objectsVersion}) is not one the object store has`);
  }
  await store.restoreObjects(add.objectsVersion);
  await project.endAdd();
}

/**
 * Finishes an index create or delete that did not (write lock held): a create the catalog does not
 * list is undone, dropping the tables its journal names; a delete is completed (the index leaves the
 * catalog, the tables its journal names are dropped, its progress removed). A journal that cannot be
 * read drops nothing: EnvironmentError, for a person to decide.
 */
export async function finishIndexWork(project: Project, store: LanceStore): Promise<void> {
  const work = await project.unfinishedIndexWork();
  if (work === null) return;
  if ("damaged" in work) throw project.damagedIndexJournal(work.damaged);
  const indexes = await project.indexes();
  const listed = indexes.some((index) => index.id === work.id);
  if (work.op === "delete" && listed) await project.saveIndexes(indexes.filter((index) => index.id !== work.id));
  if (work.op === "delete") failpoint("index-delete:catalog");
  if (work.op === "delete" || !listed) {
    for (const table of work.tables) await store.dropTable(table);
    if (work.op === "delete") failpoint("index-delete:tables");
    await project.removeProgress(work.id);
  }
  await project.endIndexWork();
}

/** Ids that have rows in some index or segments table but are not stored (left by a delete that did not finish). */
async function rowsWithoutObjects(project: Project, store: LanceStore): Promise<string[]> {
  const stored = new Set(await store.objectIds());
  const orphans = new Set<string>();
  for (const index of await project.indexes()) {
    for (const id of await store.rowIds(indexTableName(index.id))) if (!stored.has(id)) orphans.add(id);
    for (const table of partTables(index)) for (const id of await store.segmentObjectIds(table)) if (!stored.has(id)) orphans.add(id);
  }
  return [...orphans];
}

/** Removes objects from the object table, every index table and every segments table, and forgets their errors. */
export async function deleteEverywhere(project: Project, store: LanceStore, ids: readonly string[]): Promise<void> {
  await store.deleteObjects(ids);
  failpoint("delete:objects");
  for (const index of await project.indexes()) {
    await store.deleteIndexRows(indexTableName(index.id), ids);
    failpoint("delete:index-rows");
    for (const table of partTables(index)) await store.deleteSegmentsOf(table, ids);
    const progress = await project.progress(index.id);
    if (ids.some((id) => Object.hasOwn(progress.errors, id))) {
      for (const id of ids) delete progress.errors[id];
      await project.saveProgress(index.id, progress);
    }
  }
}
