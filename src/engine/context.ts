/** What every engine operation works on: the project directory and its database, opened lazily. */
import { createThreadPool, type EmbeddingPool } from "./embedding/pool.js";
import type { ModelSpec } from "./embedding/model-spec.js";
import { InternalError, type Warning } from "./errors.js";
import { interruptedWorkPending, recoverInterrupted } from "./journals.js";
import { indexTables, Project } from "./project.js";
import { processMemory } from "./process-memory.js";
import type { LanceStore } from "./store/lance-store.js";
import { defaultBudget } from "./store/vector-cache.js";

export interface ContextOptions {
  /** Receives problems that do not fail the operation (engine code never prints): the CLI writes them to stderr. */
  warn?: (warning: Warning) => void;
  /** The process answers a search or two and exits (see EngineOptions.oneShot). */
  oneShot?: boolean;
  /** Never start a background worker (see EngineOptions.noWorker). */
  noWorker?: boolean;
}

/**
 * The vectors a long-running process (not a one-shot command) may hold in memory for the rescoring
 * of hybrid searches (store/vector-cache.ts): SEMSEARCH_VECTOR_CACHE_MB (0: none), else a quarter of
 * the memory it may use, at least 256 MiB.
 */
export function vectorCacheBytes(): number {
  const configured = process.env.SEMSEARCH_VECTOR_CACHE_MB;
  const megabytes = configured === undefined || configured.trim() === "" ? Number.NaN : Number(configured);
  // (a value that is not a size is ignored, as SEMSEARCH_THREADS's is)
  return Number.isFinite(megabytes) && megabytes >= 0 ? Math.floor(megabytes * 1024 * 1024) : defaultBudget(processMemory());
}

export class EngineContext {
  private storePromise: Promise<LanceStore> | undefined;
  private readonly queryPools = new Map<string, Promise<EmbeddingPool>>();
  readonly warn: (warning: Warning) => void;
  /** A one-shot process, cold at its first search (see EngineOptions.oneShot). */
  readonly oneShot: boolean;
  /** Never start a background worker (EngineOptions.noWorker). */
  readonly noWorker: boolean;
  private closed = false;
  /** When interruptedWork last found none (performance.now()). */
  private noneInterruptedAt: number | undefined;

  constructor(
    readonly project: Project,
    options: ContextOptions = {},
  ) {
    this.warn = options.warn ?? (() => {});
    this.oneShot = options.oneShot ?? false;
    this.noWorker = options.noWorker ?? false;
  }

  /**
   * A query's vector, by the model `spec`, from a thread of its own: onnxruntime-node runs a model on
   * the calling thread, so there it would hold this thread's event loop (a server's other requests,
   * and this search's own database reads) for the length of the run. In a one-shot process, the
   * thread loads the model while this one opens the database.
   */
  async embedQuery(spec: ModelSpec, query: string): Promise<Float32Array> {
    const pool = this.queryPool(spec);
    try {
      return (await (await pool).embed([query], "query"))[0] as Float32Array;
    } catch (error) {
      // A thread whose model failed to load fails every query: the next query starts another (the
      // model may be there by then, as it would be for a load in this thread).
      const key = JSON.stringify(spec);
      if (this.queryPools.get(key) === pool) {
        this.queryPools.delete(key);
        void pool.then((threads) => threads.close()).catch(() => {});
      }
      throw error;
    }
  }

  /** Starts loading the model a coming query embeds with. */
  prepareQuery(spec: ModelSpec): void {
    if (this.closed) return;
    this.queryPool(spec).catch(() => {});
  }

  /**
   * The query thread of a model (started on first use). Every process's is loaded the same way (with
   * onnxruntime's weight prepacking): a one-shot CLI without it searched about 15 ms faster, but its
   * query vectors differed from a server's in the seventh decimal, enough to swap near-tied results.
   */
  private queryPool(spec: ModelSpec): Promise<EmbeddingPool> {
    // After close, nothing starts a thread: a prepared search that never ran must not outlive the engine.
    if (this.closed) throw new InternalError("ENGINE_CLOSED", "The engine is closed");
    const key = JSON.stringify(spec);
    let pool = this.queryPools.get(key);
    if (!pool) {
      // Started at once, not after an import: a one-shot search's thread then loads the model while
      // this thread loads LanceDB, which blocks it for a tenth of a second (bench:cold).
      try {
        pool = Promise.resolve(createThreadPool(spec, 1, { unrefIdle: true }));
      } catch (error) {
        pool = Promise.reject(error as Error);
      }
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
      await this.project.init();
      // (the catalog's tables: one missing is damage, see StoreOptions.expectedTables)
      const expectedTables = async () => (await this.project.indexes()).flatMap(indexTables);
      // (a bucket project's server reads tables' versions as it reads the state: at most stateMaxAgeMs old)
      // (loaded here, not with the engine: a search starts its model thread before these modules load)
      const { LanceStore } = await import("./store/lance-store.js");
      const store = await LanceStore.open(this.project.dataDir, this.oneShot ? { expectedTables } : { vectorCacheBytes: vectorCacheBytes(), expectedTables, versionMaxAgeMs: this.project.stateMaxAgeMs });
      // (a bucket project's writer may lose its lease: each commit checks it; docs/design/object-storage.md)
      if (this.project.remote) store.guardWrites(() => this.project.checkWriteLease());
      return store;
    })();
    const store = await this.storePromise;
    if (await this.interruptedWork()) await this.project.locked(() => recoverInterrupted(this.project, store), undefined, () => this.fence(store));
    return store;
  }

  /**
   * Whether a dead process left work to finish. A bucket project's server, whose state reads may be
   * `stateMaxAgeMs` old, looks again only that often once it found none (three requests a search
   * otherwise): a process that died meanwhile in the middle of a delete reads, for that long, as a
   * delete still under way does (its objects gone, their index rows left to drop). Writers are not
   * concerned: under the write lock, `locked` finishes such work first, from fresh reads.
   */
  private async interruptedWork(): Promise<boolean> {
    const maxAge = this.project.stateMaxAgeMs;
    if (maxAge > 0 && this.noneInterruptedAt !== undefined && performance.now() - this.noneInterruptedAt < maxAge) return false;
    const pending = await interruptedWorkPending(this.project);
    this.noneInterruptedAt = pending ? undefined : performance.now();
    return pending;
  }

  /**
   * Keeps a writer that lost the write lock from committing anything more (its lease expired while it
   * was paused, say): every table of the project is restored to its latest version, which Lance
   * refuses to commit over from an older base (docs/design/object-storage.md).
   */
  private async fence(store: LanceStore): Promise<void> {
    const tables = await store.tableNames();
    await store.fence(tables);
  }

  /**
   * Runs `fn` holding the project's write lock. Every writer goes through here: work a dead process
   * left half-done (its journal is still there, and we now hold the lock) is finished first.
   * Commands give up after `timeoutMs` (ConflictError); the background worker waits longer.
   */
  async locked<T>(fn: () => Promise<T>, timeoutMs?: number): Promise<T> {
    const store = await this.store(); // opened before taking the lock: opening may itself take it to recover
    return this.project.locked(
      async () => {
        await recoverInterrupted(this.project, store);
        return fn();
      },
      timeoutMs,
      () => this.fence(store),
    );
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
