/** What every engine operation works on: the project directory and its database, opened lazily. */
import { processAlive } from "./lock.js";
import { Project } from "./project.js";
import { LanceStore } from "./store/lancedb.js";

export class EngineContext {
  private storePromise: Promise<LanceStore> | undefined;

  constructor(readonly project: Project) {}

  /**
   * The project database; creates the project layout on first use. An add abandoned by a dead
   * process is rolled back before anything is read, so readers never see half an add.
   */
  store(): Promise<LanceStore> {
    this.storePromise ??= (async () => {
      this.project.init();
      const store = await LanceStore.open(this.project.dataDir);
      const journal = this.project.unfinishedAdd();
      if (journal && !processAlive(journal.pid)) {
        await this.project.locked(async () => {
          const current = this.project.unfinishedAdd(); // still there once we hold the lock?
          if (current) await store.restoreObjects(current.objectsVersion);
          this.project.endAdd();
        });
      }
      return store;
    })();
    return this.storePromise;
  }

  /**
   * Runs `fn` holding the project's write lock. Every writer goes through here: an add whose
   * process died mid-way (its journal is still there, and we now hold the lock) is rolled back first.
   * Commands give up after `timeoutMs` (ConflictError); the background worker waits as long as it takes.
   */
  async locked<T>(fn: () => Promise<T>, timeoutMs?: number): Promise<T> {
    await this.store(); // opened before taking the lock: opening may itself take it to roll back
    return this.project.locked(async () => {
      await this.rollBackAdd();
      return fn();
    }, timeoutMs);
  }

  /** Restores the object table to its version before an unfinished add, if there is one (write lock held). */
  async rollBackAdd(): Promise<void> {
    const journal = this.project.unfinishedAdd();
    if (!journal) return;
    await (await this.store()).restoreObjects(journal.objectsVersion);
    this.project.endAdd();
  }

  async close(): Promise<void> {
    if (this.storePromise) (await this.storePromise).close();
    this.storePromise = undefined;
  }
}
