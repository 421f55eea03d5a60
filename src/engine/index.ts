/**
 * The semsearch engine: the one module the CLI (and later the HTTP server) imports.
 * It never prints and never exits; it returns data, reports progress through callbacks
 * and throws SemsearchError subclasses.
 */
import path from "node:path";
import { EngineContext } from "./context.js";
import type * as build from "./build.js";
import type * as indexes from "./indexes.js";
import { resumeWorker, workerPid } from "./indexing/spawn.js";
import type * as objects from "./objects/service.js";
import type * as files from "./files/add-files.js";
import type * as watch from "./files/watch.js";
import type * as copy from "./project-copy.js";
import { UsageError, type Warning } from "./errors.js";
import { DEFAULT_PROJECT_DIR, namedIndex, Project, type WorkerState } from "./project.js";
import { indexModel } from "./embedding/registry.js";
import { isBucketAddress, projectAddress } from "./location.js";
import type * as models from "./models.js";
import * as keys from "./keys.js";
import type { SearchParams } from "./search/request.js";
import type { IndexInfo, IndexStatusCounts, ObjectInfo, SearchPage, StoredObject } from "./types.js";

// The operations' modules load on first use: a command loads only what it runs (`index list` no
// search code, `search` no ingest code), and a short command's time is mostly module loading.
const indexesModule = () => import("./indexes.js");
const buildModule = () => import("./build.js");
const objectsModule = () => import("./objects/service.js");
const deleteModule = () => import("./objects/delete.js");
const addFilesModule = () => import("./files/add-files.js");
const searchModule = () => import("./search/search.js");
const modelsModule = () => import("./models.js");
const thumbnailModule = () => import("./images/thumbnail.js");
const copyModule = () => import("./project-copy.js");

export * from "./errors.js";
export { beforeEarlyExit } from "./exit-cleanups.js";
export type * from "./types.js";
export type { SearchParams } from "./search/request.js";
export type { ObjectsInput, AddObjectsOptions, AddObjectsResult, AddProgress, OptionSpelling } from "./objects/service.js";
export type { BuildProgress, BuildReport, WaitOptions } from "./build.js";
export type { CopyProgress, CopyResult } from "./project-copy.js";
export type { CreateIndexBody, IndexConfiguration, FieldType } from "./config.js";
export { FIELD_TYPES, INDEX_TYPES } from "./config.js";
export { readsAsDocument } from "./files/kinds.js";
export { refuseProjectData } from "./files/project-folder.js";
export type { AddFilesResult, FileChange } from "./files/add-files.js";
export type { SkipKind } from "./files/document.js";
export { DEFAULT_LIMIT, MAX_LIMIT, MAX_RESULTS, VECTOR_CANDIDATES } from "./search/limits.js";
export { DEFAULT_MODEL } from "./embedding/registry.js";
export { stopEarlyThread } from "./embedding/early-thread.js";
export type { ModelListEntry, PullResult } from "./models.js";
export type { DownloadProgress } from "./embedding/hub.js";
export type { ModelSpec } from "./embedding/model-spec.js";
export { modelsDir } from "./embedding/models-dir.js";
export { confinedBase, displayReference } from "./images/reference.js";
export { formatBytes as formatByteLimit } from "./images/byte-limit.js";
export { integerIn } from "./params.js";
export { processAlive } from "./owner.js";
export { DEFAULT_PROJECT_DIR, findProjectDir, namedProjectDir } from "./project.js";
export { isBucketAddress, projectAddress } from "./location.js";
export type { WorkerState } from "./project.js";
export { parseJsonText } from "./objects/parse.js";
export { idLines } from "./objects/input.js";
export { refuseReplacedText } from "./replaced-text.js";
export { errorBody, errorEntry, searchResponse, searchResult } from "./responses.js";
export type { KeyInfo, Caller, CreateKeyOptions } from "./keys.js";
export { CreateIndexBodySchema } from "./config.js";
export { LOCAL_OPERATIONS, LOCAL_PROTOCOL, MAX_LOCAL_REQUEST_BYTES, localSocketPath, prepareSocketDir, realProjectPath, socketDirIsPrivate } from "./local-socket.js";
export type { LocalOperation, LocalRequest, LocalResponse } from "./local-socket.js";

export interface EngineOptions {
  /** Project directory (default `./.semsearch`). Created by the first command that writes. */
  projectDir?: string;
  /** Clock, for timestamps (default: the system clock). */
  now?: () => Date;
  /**
   * Called with problems that do not fail an operation, for a person to act on: the index searched
   * is still building, a background worker could not be started, a named field no object has.
   */
  onWarning?: (warning: Warning) => void;
  /**
   * The process answers a search or two and exits (the CLI): the vector index is loaded while the
   * query is embedded, and no vectors are held in memory for the rescoring. A long-running process
   * (a server) leaves this unset.
   */
  oneShot?: boolean;
  /**
   * Never start a background worker (`serve --no-worker`, a replica of a shared project): what is
   * written is indexed by `semsearch worker` processes.
   */
  noWorker?: boolean;
  /**
   * How old a bucket project's state (catalog, progress, journals) read outside the write lock may
   * be, in ms: a server sets about a second, to spare the requests at each search (default 0: read
   * each time). Its own writes it reads at once; tables are read fresh whatever this says.
   */
  stateMaxAgeMs?: number;
}

export interface WorkerStatus {
  running: boolean;
  pid: number | null;
  /** The machine the worker runs on, for a bucket project (whose worker may run anywhere). */
  host?: string;
  /** The worker log's path, or `stderr` for a worker running in the foreground (`semsearch worker`), which logs there. */
  log: string;
  /** What the running worker reports doing (as of its `updated_at`): phase, index, its own throughput (`indexed`, `rate`). */
  state?: WorkerState;
  /**
   * The indexes still being built, with their counts per state: the same counts as `index status`
   * (READY: found by a search), read now, whatever the worker last reported.
   */
  indexes: { id: string; name?: string; status: IndexStatusCounts }[];
}

/** A project named by `--project`: a bucket's address as it is, a local directory made absolute. */
function resolveProject(given: string): string {
  const address = projectAddress(given);
  return isBucketAddress(address) ? address : path.resolve(address);
}

export class Engine {
  private readonly ctx: EngineContext;
  private readonly now: () => Date;

  constructor(options: EngineOptions = {}) {
    this.ctx = new EngineContext(new Project(resolveProject(options.projectDir ?? DEFAULT_PROJECT_DIR), { stateMaxAgeMs: options.stateMaxAgeMs ?? 0 }), {
      ...(options.onWarning ? { warn: options.onWarning } : {}),
      ...(options.oneShot ? { oneShot: true } : {}),
      ...(options.noWorker ? { noWorker: true } : {}),
    });
    this.now = options.now ?? (() => new Date());
  }

  /** Absolute path of the project directory. */
  get projectDir(): string {
    return this.ctx.project.dir;
  }

  /** Validates a create-index body (`{"configuration": {...}}`), stores the index and starts building it. */
  async createIndex(body: unknown, options: indexes.CreateIndexOptions = {}): Promise<{ id: string }> {
    return (await indexesModule()).createIndex(this.ctx, body, this.now(), options);
  }

  async listIndexes(): Promise<IndexInfo[]> {
    const indexes = await indexesModule();
    await resumeWorker(this.ctx);
    return indexes.listIndexes(this.ctx);
  }

  /** NotFoundError INDEX_NOT_FOUND for an unknown id. */
  async getIndex(id: string): Promise<IndexInfo> {
    const indexes = await indexesModule();
    const index = await indexes.findIndex(this.ctx, id);
    await resumeWorker(this.ctx);
    return indexes.describeIndex(this.ctx, index);
  }

  async indexStatus(id: string): Promise<IndexStatusCounts> {
    return (await this.getIndex(id)).status;
  }

  /** Deletes an index (by id or name); resolves to its id. */
  async deleteIndex(id: string): Promise<string> {
    return (await indexesModule()).deleteIndex(this.ctx, id);
  }

  /**
   * Resolves when the index has nothing UPLOADED or PROCESSING. ConflictError (exit 5) after
   * `timeoutMs`, or when nothing moves for `stallMs` (default 10 minutes).
   */
  async waitForIndex(id: string, options: build.WaitOptions = {}): Promise<IndexInfo> {
    return (await buildModule()).waitForIndex(this.ctx, id, options);
  }

  /** After a build: objects that failed (count and the first reasons) and objects without searchable text. */
  async buildReport(id: string): Promise<build.BuildReport> {
    return (await buildModule()).buildReport(this.ctx, id);
  }

  /** Stores objects (all or nothing) and starts indexing them in the background. */
  async addObjects(inputs: readonly objects.ObjectsInput[], options: objects.AddObjectsOptions = {}): Promise<objects.AddObjectsResult> {
    return (await objectsModule()).addObjects(this.ctx, inputs, options, this.now());
  }

  async getObject(id: string): Promise<ObjectInfo> {
    const objects = await objectsModule();
    await resumeWorker(this.ctx);
    return objects.getObject(this.ctx, id);
  }

  async listObjects(offset = 0, limit = 100): Promise<StoredObject[]> {
    return (await objectsModule()).listObjects(this.ctx, offset, limit);
  }

  async deleteObject(id: string): Promise<void> {
    return (await objectsModule()).deleteObject(this.ctx, id);
  }

  /** Adds files and folders (files/add-files.ts): each file's objects, unchanged files skipped, step by step. */
  async addFiles(targets: readonly string[], options: files.AddFilesOptions = {}): Promise<files.AddFilesResult> {
    return (await addFilesModule()).addFiles(this.ctx, targets, options, this.now());
  }

  /** Keeps the project in sync with folders until `options.signal` aborts (files/watch.ts). */
  async watchFiles(targets: readonly string[], options: watch.WatchOptions): Promise<void> {
    return (await import("./files/watch.js")).watchFiles(this.ctx, targets, options, this.now);
  }

  /** Deletes the objects read from files at or under the paths given (absolute) (files/delete-paths.ts), all or none; returns their ids. */
  async deletePaths(paths: readonly string[]): Promise<string[]> {
    return (await import("./files/delete-paths.js")).deletePaths(this.ctx, paths);
  }

  /** Deletes objects by id, all or none (objects/delete.ts); returns the ids deleted. */
  async deleteObjects(ids: readonly string[]): Promise<string[]> {
    return (await deleteModule()).deleteObjects(this.ctx, ids);
  }

  /** The ids of the objects a filter matches in an index (its filterable fields), refused while it builds. */
  async objectsMatching(indexId: string, filter: string): Promise<string[]> {
    return (await deleteModule()).objectsMatching(this.ctx, indexId, filter);
  }

  /** Searches an index; the result has the service's pagination (spec §2.7). */
  async search(indexId: string, params: SearchParams): Promise<SearchPage> {
    const page = await (await searchModule()).search(this.ctx, indexId, params);
    await resumeWorker(this.ctx);
    return page;
  }

  /**
   * Starts loading the model of an index's queries, for a search about to be made. Never fails: the search reports an unknown index or a model
   * that cannot be loaded.
   */
  prepareSearch(indexId: string): void {
    // (only the catalog is read first, with modules already loaded: the thread starts before LanceDB is loaded)
    void (async () => {
      const index = namedIndex(await this.ctx.project.indexes(), indexId);
      if (index) this.ctx.prepareQuery(indexModel(index));
    })().catch(() => {});
  }

  /** Loads the database and the models of the project's indexes ahead of their first search (for a server). */
  async warmUp(): Promise<void> {
    await (await searchModule()).warmUp(this.ctx);
  }

  /**
   * A PNG thumbnail of one of an object's images (as stored in it), or null when it cannot be had
   * (images/thumbnail.ts). `size`: at most this many pixels a side (default 256). `signal`: the
   * caller has gone (CancelledError); the work is abandoned once no caller waits for it.
   */
  async imageThumbnail(objectId: string, identifier: string, size?: number, options: { signal?: AbortSignal } = {}): Promise<Buffer | null> {
    return (await thumbnailModule()).objectThumbnail(this.ctx, objectId, identifier, size, options.signal);
  }

  /** Known, bundled and downloaded models, with the indexes of this project that use each. */
  /**
   * Copies this project whole to `to` (a local directory or `s3://bucket/prefix` that holds nothing),
   * holding this project's write lock meanwhile (project-copy.ts).
   */
  async copyProject(to: string, options: { onProgress?: (progress: copy.CopyProgress) => void } = {}): Promise<copy.CopyResult> {
    return (await copyModule()).copyProject(this.ctx, new Project(resolveProject(to)), this.now, options.onProgress);
  }

  async listModels(): Promise<models.ModelListEntry[]> {
    return (await modelsModule()).listModelEntries(await this.projectIndexes());
  }

  /** Downloads a Hugging Face model ahead of use (resumes a partial download). */
  async pullModel(id: string, options: Pick<models.ResolveOptions, "dtype" | "revision" | "onProgress"> = {}): Promise<models.PullResult> {
    return (await modelsModule()).pullModel(id, options);
  }

  /** Removes a downloaded model; ConflictError MODEL_IN_USE while an index of this project uses it, unless forced. */
  async removeModel(id: string, force = false): Promise<{ id: string; bytes: number }> {
    return (await modelsModule()).removeModel(id, await this.projectIndexes(), force);
  }

  /** The indexes of the project, or none when there is no project here (models work without one). */
  private async projectIndexes() {
    return (await this.ctx.project.exists()) ? this.ctx.project.indexes() : [];
  }

  /** Whether a worker runs and what it does; starts one first when work is pending and none runs. */
  async workerStatus(): Promise<WorkerStatus> {
    if (await resumeWorker(this.ctx)) {
      // give the new worker a moment to take its lock, so the answer is about it
      for (let i = 0; i < 40 && (await workerPid(this.ctx.project)) === null; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const holder = await (await this.ctx.project.locks()).worker();
    const pid = holder?.pid ?? null;
    const state = await this.ctx.project.workerState();
    const own = pid !== null && state?.pid === pid ? state : undefined;
    const building = (await (await indexesModule()).listIndexes(this.ctx)).filter((index) => index.state === "BUILDING");
    const indexes = building.map(({ id, name, status }) => ({ id, ...(name !== undefined ? { name } : {}), status }));
    const status: WorkerStatus = { running: pid !== null, pid, ...(holder?.host ? { host: holder.host } : {}), log: own?.foreground ? "stderr" : this.ctx.project.workerLog, indexes };
    if (own) status.state = own;
    return status;
  }

  /**
   * Runs the worker in this process until `signal` aborts (`semsearch worker`): see
   * runForegroundWorker. `log` gets one line per event.
   */
  async runWorker(options: { signal: AbortSignal; pollMs: number; log: (message: string) => void }): Promise<void> {
    const { runForegroundWorker } = await import("./indexing/worker.js");
    await runForegroundWorker(this.ctx, options.log, options);
  }

  /** Creates an API key for `semsearch serve`; the result holds the key, which is never shown again. */
  createKey(options: keys.CreateKeyOptions = {}): Promise<keys.KeyInfo & { key: string }> {
    return keys.createKey(this.ctx.project, options, this.now());
  }

  /** The project's API keys (ids, names, scopes; never the keys). */
  listKeys(): Promise<keys.KeyInfo[]> {
    return keys.listKeys(this.ctx.project);
  }

  /** Revokes an API key by id or name; NotFoundError KEY_NOT_FOUND when there is none. */
  revokeKey(idOrName: string): Promise<keys.KeyInfo> {
    return keys.revokeKey(this.ctx.project, idOrName, this.now());
  }

  /** A checker of API keys that follows changes to the keys file (for a long-running server). */
  keyChecker(): Promise<keys.KeyChecker> {
    return keys.KeyChecker.open(this.ctx.project);
  }

  close(): Promise<void> {
    return this.ctx.close();
  }
}
