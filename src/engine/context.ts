/** What every engine operation works on: the project directory and its database, opened lazily. */
import type { Warning } from "./errors.js";
import { interruptedWorkPending, recoverInterrupted } from "./journals.js";
import { Project } from "./project.js";
import { LanceStore } from "./store/lancedb.js";

export class EngineContext {
  private storePromise: Promise<LanceStore> | undefined;

  /**
   * @param warn receives problems that do not fail the operation (engine code never prints):
   *   the CLI writes them to stderr.
   */
  constructor(
    readonly project: Project,
    readonly warn: (warning: Warning) => void = () => {},
  ) {}

  /**
   * The project database; creates the project layout on first use. Work left half-done by a dead
   * process (an add to roll back, a delete to complete) is finished before anything is read, so
   * readers never see half an add or half a delete.
   */
  async store(): Promise<LanceStore> {
    this.storePromise ??= (async () => {
      this.project.init();
      return LanceStore.open(this.project.dataDir);
    })();
    const store = await this.storePromise;
    if (interruptedWorkPending(this.project)) await this.project.locked(() => recoverInterrupted(this.project, store));
    return store;
  }

  /**
   * Runs `fn` holding the project's write lock. Every writer goes through here: work a dead process
   * left half-done (its journal is still there, and we now hold the lock) is finished first.
   * Commands give up after `timeoutMs` (ConflictError); the background worker waits longer.
   */
  async locked<T>(fn: () => Promise<T>, timeoutMs?: number): Promise<T> {
    const store = await this.store(); // opened before taking the lock: opening may itself take it to recover
    return this.project.locked(async () => {
      await recoverInterrupted(this.project, store);
      return fn();
    }, timeoutMs);
  }

  async close(): Promise<void> {
    if (this.storePromise) (await this.storePromise).close();
    this.storePromise = undefined;
  }
}
