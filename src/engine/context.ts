/** What every engine operation works on: the project directory and its database, opened lazily. */
import type { EmbeddingPool } from "./embedding/pool.js";
import type { ModelSpec } from "./embedding/model-spec.js";
import { InternalError, type Warning } from "./errors.js";
import { interruptedWorkPending, recoverInterrupted } from "./journals.js";
import { Project } from "./project.js";
import { LanceStore } from "./store/lancedb.js";

export interface ContextOptions {
  /** Receives problems that do not fail the operation (engine code never prints): the CLI writes them to stderr. */
  warn?: (warning: Warning) => void;
  /** Queries are embedded by a model loaded in a thread of its own (see EngineOptions.queryThread). */
  queryThread?: boolean;
}

export class EngineContext {
  private storePromise: Promise<LanceStore> | undefined;
  private readonly queryPools = new Map<string, Promise<EmbeddingPool>>();
  readonly warn: (warning: Warning) => void;
  /** Queries are embedded in a thread of their own: a one-shot process, cold at its first search. */
  readonly queryThread: boolean;
  private closed = false;

  constructor(
    readonly project: Project,
    options: ContextOptions = {},
  ) {
    this.warn = options.warn ?? (() => {});
    this.queryThread = options.queryThread ?? false;
  }

  /**
   * A query's vector, by the model `spec`: in this thread (the model stays loaded for the next
   * query), or by a thread of its own that loads the model while this one opens the database.
   */
  async embedQuery(spec: ModelSpec, query: string): Promise<Float32Array> {
    const pool = this.queryPool(spec);
    if (!pool) {
      const { loadModel } = await import("./embedding/registry.js");
      return (await (await loadModel(spec)).embedTexts([query], "query"))[0] as Float32Array;
    }
    return (await (await pool).embed([query], "query"))[0] as Float32Array;
  }

  /** Starts loading the model a coming query embeds with (a query thread's engine only). */
  prepareQuery(spec: ModelSpec): void {
    if (this.closed) return;
    this.queryPool(spec)?.catch(() => {});
  }

  /** The query thread of a model (started on first use), or null when queries are embedded in this thread. */
  private queryPool(spec: ModelSpec): Promise<EmbeddingPool> | null {
    if (!this.queryThread) return null;
    // After close, nothing starts a thread: a prepared search that never ran must not outlive the engine.
    if (this.closed) throw new InternalError("ENGINE_CLOSED", "The engine is closed");
    const key = JSON.stringify(spec);
    let pool = this.queryPools.get(key);
    if (!pool) {
      pool = import("./embedding/pool.js").then(({ createThreadPool }) => createThreadPool(spec, 1, { unrefIdle: true, fewTexts: true }));
      this.queryPools.set(key, pool);
    }
    return pool;
  }

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
    this.closed = true;
    if (this.storePromise) (await this.storePromise).close();
    this.storePromise = undefined;
    const pools = [...this.queryPools.values()];
    this.queryPools.clear();
    await Promise.all(pools.map(async (pool) => (await pool).close()));
  }
}
