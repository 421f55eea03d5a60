/** What every engine operation works on: the project directory and its database, opened lazily. */
import { Project } from "./project.js";
import { LanceStore } from "./store/lancedb.js";

export class EngineContext {
  private storePromise: Promise<LanceStore> | undefined;

  constructor(readonly project: Project) {}

  /** The project database; creates the project layout on first use. */
  store(): Promise<LanceStore> {
    this.storePromise ??= (async () => {
      this.project.init();
      return LanceStore.open(this.project.dataDir);
    })();
    return this.storePromise;
  }

  async close(): Promise<void> {
    if (this.storePromise) (await this.storePromise).close();
    this.storePromise = undefined;
  }
}
