/**
 * A project directory: its layout, the index catalog, per-index progress and the
 * write sequence. Writers (objects add/delete, index create/delete, the worker's
 * commits) serialise on one lock file; readers never take it.
 *
 *   <project>/catalog.json        the indexes: id, configuration, model, dimension, created_at
 *   <project>/progress/<id>.json  per index: how far the worker got (written by the worker)
 *   <project>/seq                 the last write sequence number handed out
 *   <project>/data/               the LanceDB database
 *   <project>/add.journal         while an add writes: the object table's version before it
 *   <project>/delete.journal      while a delete runs: the ids it removes
 *   <project>/index.journal       while an index create or delete runs: the index and its tables
 *   <project>/tmp/                spooled standard input of an add
 *   <project>/worker.json         what the worker is doing (while it runs)
 *   <project>/copy.journal        while `project copy` fills this project: where from (project-copy.ts)
 *   <project>/write.lock, worker.lock, worker.log
 */
import { mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { isImageIndex, parseCreateIndexBody } from "./config.js";
import { highlightsEnabled } from "./indexing/extract.js";
import { ConflictError, EnvironmentError, fsError, InternalError, UsageError } from "./errors.js";
import { FileDocs, RecordDocs, type ProjectDocs } from "./project-docs.js";
import { FileLocks, LeaseLocks, type ProjectLocks } from "./project-locks.js";
import { isBucketAddress, parseProjectLocation } from "./location.js";
import { remoteProjectCacheDir } from "./embedding/models-dir.js";
import { s3Config } from "./state/s3-config.js";
import * as v from "valibot";
import {
  AddJournalSchema,
  CatalogSchema,
  DeleteJournalSchema,
  emptyProgress,
  IndexJournalSchema,
  ProgressSchema,
  Seq,
  WorkerStateSchema,
  type AddJournal,
  type DeleteJournal,
  type IndexJournal,
  type IndexProgress,
  type WorkerState,
} from "./project-state.js";

/** What `project copy` records in the project it fills, until it is done. */
const CopyJournalSchema = v.object({ from: v.string(), started_at: v.string() });
import { ownerAlive, ownerTag, tagAlive, type Owner } from "./owner.js";
import { damaged } from "./state-files.js";
import type { IndexRecord } from "./types.js";

export { emptyProgress } from "./project-state.js";
export type { AddJournal, DeleteJournal, IndexJournal, IndexProgress, WorkerState } from "./project-state.js";

/** The project's state documents (files in a local project, records in a bucket's): see project-docs.ts. */
const CATALOG = "catalog.json";
const SEQ = "seq";
const ADD_JOURNAL = "add.journal";
const DELETE_JOURNAL = "delete.journal";
const INDEX_JOURNAL = "index.journal";
const WORKER_STATE = "worker.json";
const COPY_JOURNAL = "copy.journal";
const KEYS = "keys.json";
const progressDoc = (indexId: string) => `progress/${indexId}.json`;

/** Default project directory, relative to the working directory. */
export const DEFAULT_PROJECT_DIR = ".semsearch";

/**
 * The project a command run in `start` uses when none is named: the nearest `.semsearch` holding a
 * catalog or a database (`data/`) in `start` or a directory above it (as git finds its repository),
 * else null. A project whose catalog was lost is found too, so that it is reported as damaged
 * rather than a new project started beside it.
 */
export function findProjectDir(start: string): string | null {
  for (let dir = path.resolve(start); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, DEFAULT_PROJECT_DIR);
    if (holdsProject(candidate)) return candidate;
    if (path.dirname(dir) === dir) return null;
  }
}

/** Whether local directory `dir` is a project (it has a catalog or a data folder). */
export function holdsProject(dir: string): boolean {
  for (const marker of ["catalog.json", "data"]) {
    try {
      statSync(path.join(dir, marker));
      return true;
    } catch {
      // not here
    }
  }
  return false;
}

/**
 * The project `--project <dir>` means: `dir` itself, unless it is not a project and holds one in
 * `.semsearch` (the folder a project was made in, named instead of its `.semsearch`): then that one.
 */
export function namedProjectDir(dir: string): string {
  const inner = path.join(dir, DEFAULT_PROJECT_DIR);
  return !holdsProject(dir) && holdsProject(inner) ? inner : dir;
}

/** The index of `indexes` that `idOrName` names: its id, or its name. */
export function namedIndex(indexes: readonly IndexRecord[], idOrName: string): IndexRecord | undefined {
  return indexes.find((candidate) => candidate.id === idOrName || (candidate.name !== undefined && candidate.name === idOrName));
}

export class Project {
  /** Where the project's LanceDB database is: a directory, or an `s3://…/data` address. */
  readonly dataDir: string;
  /** The background worker's log (on this machine, for a bucket project too). */
  readonly workerLog: string;
  /** Whether the project is in a bucket (`s3://…`) rather than a local directory. */
  readonly remote: boolean;
  /**
   * This machine's directory of the project: the project itself when local; for a bucket project a
   * folder of this machine's cache (models-dir.ts) for its worker log, fetched images and spooled input.
   */
  readonly localDir: string;
  private readonly tmpDir: string;
  private backendPromise: Promise<{ docs: ProjectDocs; locks: ProjectLocks }> | undefined;
  /** The write lock while `locked` holds it (of this process's one writer at a time). */
  private writing: { stillHeld: () => Promise<boolean> } | undefined;
  /** A worker's claim while it trains an index's vector index outside the write lock (see maintaining). */
  private maintenance: (() => Promise<boolean>) | undefined;

  /**
   * `dir`: an absolute local directory, or a bucket project's address (`s3://bucket/prefix`, as
   * parseProjectLocation normalises it). `stateMaxAgeMs`: how old a bucket project's state read
   * outside the write lock may be (EngineOptions.stateMaxAgeMs).
   */
  constructor(
    readonly dir: string,
    private readonly options: { stateMaxAgeMs?: number } = {},
  ) {
    this.remote = isBucketAddress(dir);
    this.dataDir = this.remote ? `${dir}/data` : path.join(dir, "data");
    this.localDir = this.remote ? remoteProjectCacheDir(dir) : dir;
    this.workerLog = path.join(this.localDir, "worker.log");
    this.tmpDir = path.join(this.localDir, "tmp");
  }

  /** How old a read of a bucket project's state outside the write lock may be, in ms (0 for a local project: its files are read each time). */
  get stateMaxAgeMs(): number {
    return this.remote ? (this.options.stateMaxAgeMs ?? 0) : 0;
  }

  /** The documents and locks: files for a local project; for a bucket, records and leases in its state store, checked once. */
  private backend(): Promise<{ docs: ProjectDocs; locks: ProjectLocks }> {
    if (this.backendPromise) return this.backendPromise;
    const opening = (async (): Promise<{ docs: ProjectDocs; locks: ProjectLocks }> => {
      if (!this.remote) return { docs: new FileDocs(this.dir), locks: new FileLocks(this.dir) };
      const location = parseProjectLocation(this.dir);
      if (location.kind !== "remote" || location.scheme !== "s3") {
        throw new UsageError("REMOTE_PROJECT_UNSUPPORTED", `The project ${this.dir} is on an object store semsearch cannot keep its state on yet (s3:// only)`, {
          hint: "Use an S3 bucket (AWS, or an S3-compatible server through AWS_ENDPOINT_URL), or a local directory.",
        });
      }
      const { S3StateStore } = await import("./state/s3-store.js");
      const store = await S3StateStore.open(location.bucket, location.prefix === "" ? "state" : `${location.prefix}/state`, s3Config(process.env));
      const mustBeFresh = () => this.writing !== undefined || this.maintenance !== undefined;
      return { docs: new RecordDocs(store, this.dir, { maxAgeMs: this.options.stateMaxAgeMs ?? 0, mustBeFresh }), locks: new LeaseLocks(store, () => store.checkConditionalWrites()) };
    })();
    this.backendPromise = opening;
    opening.catch(() => {
      this.backendPromise = undefined; // (a store out of reach now may answer the next call)
    });
    return opening;
  }

  private async docs(): Promise<ProjectDocs> {
    return (await this.backend()).docs;
  }

  /** The write and worker locks (file locks, or leases of a bucket project). */
  async locks(): Promise<ProjectLocks> {
    return (await this.backend()).locks;
  }

  /** A state document of the project's other modules (keys.json): see project-docs.ts. */
  async readDocument<T>(name: string, schema: v.GenericSchema<unknown, T>) {
    return (await this.docs()).read(name, schema);
  }

  async writeDocument(name: string, value: unknown, mode?: number): Promise<void> {
    await (await this.docs()).write(name, value, mode);
  }

  /** Where a state document is, for messages. */
  documentWhere(name: string): string {
    return this.where(name);
  }

  /** Where a state document is, for messages. */
  private where(name: string): string {
    return this.remote ? RecordDocs.address(this.dir, name) : FileDocs.path(this.dir, name);
  }

  private notADirectory(dir = this.dir): EnvironmentError {
    if (dir !== this.dir) {
      return new EnvironmentError("ENOTDIR", `${dir} in the project is not a directory`, {
        hint: "Something replaced a directory of the project with a file: move that file away.",
      });
    }
    return new EnvironmentError("ENOTDIR", `The project path ${this.dir} is not a directory`, {
      hint: "--project (or SEMSEARCH_PROJECT) must name a directory, or a path where one can be created.",
    });
  }

  /** A fresh file name under the project's tmp/ for spooling input, tagged with this process (the caller removes it). */
  async spoolFile(): Promise<string> {
    await this.exists(); // a damaged project is refused before anything is written into it
    this.mkdir(this.tmpDir);
    return path.join(this.tmpDir, `input-${ownerTag()}-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  }

  /** Removes spooled input left by processes that died (a killed `objects add -`). */
  removeAbandonedSpools(): void {
    let names: string[];
    try {
      names = readdirSync(this.tmpDir);
    } catch {
      return;
    }
    for (const name of names) {
      const tag = /^input-(\d+-[0-9a-f]+)-/.exec(name)?.[1];
      if (tag !== undefined && !tagAlive(tag)) rmSync(path.join(this.tmpDir, name), { force: true });
    }
  }

  /** Records (write lock held) that an add is writing, and the object table's version before it. */
  async beginAdd(owner: Owner, objectsVersion: number): Promise<void> {
    await (await this.docs()).write(ADD_JOURNAL, { ...owner, objectsVersion } satisfies AddJournal);
  }

  async endAdd(): Promise<void> {
    await (await this.docs()).remove(ADD_JOURNAL);
  }

  /**
   * The journal of an add that started and has not finished, if any. A damaged journal still says
   * that an add was under way: `objectsVersion` is then null (see damagedAddJournal).
   */
  async unfinishedAdd(): Promise<(Omit<AddJournal, "objectsVersion"> & { objectsVersion: number | null }) | null> {
    const read = await (await this.docs()).read(ADD_JOURNAL, AddJournalSchema);
    if (read.ok) return read.value;
    return read.missing ? null : { pid: 0, objectsVersion: null };
  }

  /**
   * The error for an add journal that cannot be read. Its version cannot be guessed safely (a wrong
   * guess would roll back committed adds), so a person decides: the message says when the add began.
   */
  /** When the add journal was written (ms since the epoch), or null without one. */
  async addJournalTime(): Promise<number | null> {
    return (await this.docs()).writtenAt(ADD_JOURNAL);
  }

  async damagedAddJournal(reason = "an objects add was interrupted and its journal cannot be read, so semsearch cannot tell which version of the object store to restore"): Promise<EnvironmentError> {
    const time = await this.addJournalTime();
    const began = time === null ? "" : ` It began at ${new Date(time).toISOString()}.`;
    return damaged(this.where(ADD_JOURNAL), reason, `Remove ${this.where(ADD_JOURNAL)} to keep the objects as they are now (the interrupted add may have written some of its objects), then add that input again.${began}`);
  }

  /** Records (write lock held) that objects are being deleted; an interrupted delete is completed from it. */
  async beginDelete(owner: Owner, ids: string[]): Promise<void> {
    await (await this.docs()).write(DELETE_JOURNAL, { ...owner, ids } satisfies DeleteJournal);
  }

  async endDelete(): Promise<void> {
    await (await this.docs()).remove(DELETE_JOURNAL);
  }

  /**
   * The ids of a delete that started and has not finished, if any. A damaged journal still says a
   * delete was under way: `ids` is then null, and the caller reconciles every index with the store.
   */
  async unfinishedDelete(): Promise<(Omit<DeleteJournal, "ids"> & { ids: string[] | null }) | null> {
    const read = await (await this.docs()).read(DELETE_JOURNAL, DeleteJournalSchema);
    if (read.ok) return read.value;
    return read.missing ? null : { pid: 0, ids: null };
  }

  /** Marks this project as being filled by `project copy` from `from` (its write lock held): see project-copy.ts. */
  async beginCopy(from: string, startedAt: string): Promise<void> {
    await (await this.docs()).write(COPY_JOURNAL, { from, started_at: startedAt });
  }

  async endCopy(): Promise<void> {
    await (await this.docs()).remove(COPY_JOURNAL);
  }

  /** The copy that was filling this project and did not finish, if any (a damaged journal: `from` unknown). */
  async unfinishedCopy(): Promise<{ from: string | null } | null> {
    const read = await (await this.docs()).read(COPY_JOURNAL, CopyJournalSchema);
    if (read.ok) return { from: read.value.from };
    return read.missing ? null : { from: null };
  }

  /**
   * The documents a copy of the project carries, in the order to write them, the catalog last (its
   * presence makes a project): the sequence counter, each index's progress, the keys; `value`
   * undefined for one the project does not have (a copy run again removes it). Not the journals (a
   * copy is made with none pending), the worker's state, or the locks. A damaged catalog or keys
   * document is refused; a damaged counter or progress is carried as absent, as the project reads it
   * (the worker rebuilds both).
   */
  async exportDocuments(): Promise<{ name: string; value: unknown; mode?: number }[]> {
    const docs = await this.docs();
    const indexes = await this.indexes(); // (a damaged catalog is refused here)
    const out: { name: string; value: unknown; mode?: number }[] = [];
    for (const [name, mode] of [[SEQ], ...indexes.map((index) => [progressDoc(index.id)]), [KEYS, 0o600], [CATALOG]] as [string, number?][]) {
      const read = await docs.read(name, v.unknown());
      if (!read.ok && !read.missing && name === KEYS) throw damaged(this.where(name), read.reason, "Mend it in the project copied from (or move it away: every key it held stops working), then copy again.");
      out.push({ name, value: read.ok ? read.value : undefined, ...(mode !== undefined ? { mode } : {}) });
    }
    return out;
  }

  /** Writes (or removes) the documents a copy carries (exportDocuments), in their order, making a local project's folders first. */
  async importDocuments(documents: readonly { name: string; value: unknown; mode?: number }[]): Promise<void> {
    if (!this.remote) {
      this.mkdir(this.where("progress"));
      this.mkdir(this.dataDir);
    }
    const docs = await this.docs();
    for (const { name, value, mode } of documents) await (value === undefined ? docs.remove(name) : docs.write(name, value, mode));
  }

  /**
   * What a bucket project's state holds besides leases and a copy's journal (names at its top), for
   * a copy that must find it empty; a local project's files are looked at by the copy itself.
   */
  async heldState(): Promise<string[]> {
    const docs = await this.docs();
    if (!(docs instanceof RecordDocs)) return [];
    return (await docs.names()).filter((name) => name !== "leases" && name !== "probe" && name !== COPY_JOURNAL);
  }

  /** Records (write lock held) that an index is being created or deleted, naming the tables it creates or drops. */
  async beginIndexWork(journal: IndexJournal): Promise<void> {
    await (await this.docs()).write(INDEX_JOURNAL, journal);
  }

  async endIndexWork(): Promise<void> {
    await (await this.docs()).remove(INDEX_JOURNAL);
  }

  /** The journal of an index create or delete that has not finished; `{ damaged }` when it cannot be read. */
  async unfinishedIndexWork(): Promise<IndexJournal | { pid: 0; damaged: string } | null> {
    const read = await (await this.docs()).read(INDEX_JOURNAL, IndexJournalSchema);
    if (read.ok) return read.value;
    return read.missing ? null : { pid: 0, damaged: read.reason };
  }

  damagedIndexJournal(reason: string): EnvironmentError {
    return damaged(
      this.where(INDEX_JOURNAL),
      `an index create or delete was interrupted and its journal cannot be read (${reason}), so semsearch cannot tell which tables it may drop`,
      `Remove ${this.where(INDEX_JOURNAL)}, then check \`semsearch index list\`: delete an index that is still listed if it was being deleted. Tables in ${this.dataDir} named index_, segments_ or images_ with the id of an index that is not listed are left unused; remove them by hand if you wish.`,
    );
  }

  /**
   * Whether the owner of a journal is still at work (a damaged journal's owner is unknown: not at
   * work). A journal is written under the write lock, so in a bucket project (whose writer may be on
   * another machine) its owner is at work while a live holder has the write lease.
   */
  async journalOwnerAlive(journal: { pid: number; start?: string }): Promise<boolean> {
    if (this.remote) return (await this.locks()).writerLive();
    return journal.pid > 0 && ownerAlive(journal);
  }

  /**
   * Whether the project exists; throws when its path exists but is not a directory, and when its
   * catalog is missing while the project holds data (EnvironmentError CORRUPT_PROJECT): such a
   * project is damaged, not new, and writing a fresh catalog into it would hide every index.
   */
  async exists(): Promise<boolean> {
    if (this.remote) return this.remoteExists();
    try {
      if (!statSync(this.dir).isDirectory()) throw this.notADirectory();
      statSync(this.where(CATALOG));
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOTDIR") throw this.notADirectory();
      if (code !== "ENOENT") throw fsError(error, "read", this.dir);
    }
    const copy = await this.unfinishedCopy();
    if (copy) throw this.copyUnfinished(copy.from);
    const held = this.heldData();
    if (held.length > 0) throw this.missingCatalog(held);
    return false;
  }

  /** A project that `project copy` was filling and did not finish (it has no catalog yet). */
  copyUnfinished(from: string | null): EnvironmentError {
    const again = from === null ? "run the copy again" : `run \`semsearch project copy ${from} ${this.dir}\` again`;
    return new EnvironmentError("COPY_UNFINISHED", `The project ${this.dir} is an unfinished copy${from === null ? "" : ` of ${from}`}: a project copy was stopped before it ended`, {
      hint: `To finish it, ${again}: it starts over. Or remove ${this.dir}.`,
    });
  }

  /** A bucket project exists once its catalog does; without one, any other state document means it was lost. */
  private async remoteExists(): Promise<boolean> {
    const docs = await this.docs();
    const catalog = await docs.read(CATALOG, v.unknown());
    if (catalog.ok || !catalog.missing) return true; // (a damaged one is reported by indexes())
    const copy = await this.unfinishedCopy();
    if (copy) throw this.copyUnfinished(copy.from);
    const held: string[] = [];
    for (const name of [SEQ, ADD_JOURNAL, DELETE_JOURNAL, INDEX_JOURNAL]) if ((await docs.writtenAt(name)) !== null) held.push(name);
    if (held.length > 0) throw this.missingCatalog(held);
    return false;
  }

  /** What the project holds besides its catalog (paths relative to it): the database's tables, progress, seq, journals. */
  private heldData(): string[] {
    const held: string[] = [];
    for (const dir of [this.dataDir, this.where("progress")]) {
      try {
        held.push(...readdirSync(dir).map((name) => path.relative(this.dir, path.join(dir, name))));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOTDIR") throw this.notADirectory(dir);
        if (code !== "ENOENT") throw fsError(error, "read", dir);
      }
    }
    for (const file of [SEQ, ADD_JOURNAL, DELETE_JOURNAL, INDEX_JOURNAL].map((name) => this.where(name))) {
      try {
        statSync(file);
        held.push(path.basename(file));
      } catch {
        // not there
      }
    }
    return held;
  }

  private missingCatalog(held: string[]): EnvironmentError {
    const shown = held.length > 4 ? [...held.slice(0, 4), `${held.length - 4} more`] : held;
    return new EnvironmentError("CORRUPT_PROJECT", `The project file ${this.where(CATALOG)} is missing, but the project holds data (${shown.join(", ")}): the project is damaged`, {
      hint: `catalog.json lists the indexes and their configurations, and nothing else holds them: restore it from a backup. Without one, write {"version":1,"indexes":[]} into it to use the objects again, then create the indexes again (the old indexes' tables stay unused in ${this.dataDir} until you remove them).`,
    });
  }

  private mkdir(dir: string): void {
    try {
      mkdirSync(dir, { recursive: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EEXIST" || code === "ENOTDIR") {
        const projectIsDir = (() => {
          try {
            return statSync(this.dir).isDirectory();
          } catch {
            return false;
          }
        })();
        throw this.notADirectory(projectIsDir ? dir : this.dir);
      }
      if (code === "ENOENT") {
        // Node's recursive mkdir also says ENOENT when the last folder cannot be made (it looks at
        // it after EROFS or EACCES): made alone, it tells the real reason when its parent is there.
        try {
          mkdirSync(dir);
          return;
        } catch (again) {
          const real = (again as NodeJS.ErrnoException).code;
          if (real === "EEXIST") return;
          if (real !== "ENOENT") throw fsError(again, "create the directory", dir);
        }
        throw new EnvironmentError("ENOENT", `Cannot create the directory ${dir}: a part of its path does not exist (a symbolic link to a missing directory?)`, {
          hint: "Point --project (or SEMSEARCH_PROJECT) at a directory that exists or can be created.",
        });
      }
      throw fsError(error, "create the directory", dir);
    }
  }

  /**
   * Creates the directory layout if missing, and checks that its directories are directories and
   * that an existing catalog can be read: nothing is written into a damaged project.
   */
  async init(): Promise<void> {
    const existed = await this.exists();
    if (existed) await this.indexes();
    if (!this.remote) {
      this.mkdir(this.where("progress"));
      this.mkdir(this.dataDir);
    }
    if (!existed) {
      await (await this.locks()).checkStore();
      await (await this.docs()).write(CATALOG, { version: 1, indexes: [] });
    }
  }

  /**
   * Runs `fn` holding the project's write lock, waiting for it up to `timeoutMs` (default 2 minutes).
   * `fence` runs first when the lock was taken over from a holder that did not release it (a bucket
   * project's lease that expired): it must keep that holder's late commits out (LanceStore.fence).
   * In a bucket project, a lease lost while `fn` ran (this process paused past its expiry, or the
   * store out of reach) makes the outcome unknown: ConflictError LEASE_LOST, to be retried.
   */
  async locked<T>(fn: () => Promise<T>, timeoutMs?: number, fence?: () => Promise<void>): Promise<T> {
    await this.init();
    return this.holdingWriteLock(fn, timeoutMs, fence);
  }

  /**
   * Runs `fn` holding the write lock of a project that does not exist yet, without making it (no
   * catalog): `project copy` fills it (project-copy.ts). A local project's directory is made for the lock.
   */
  async filling<T>(fn: () => Promise<T>): Promise<T> {
    if (!this.remote) this.mkdir(this.dir);
    await (await this.locks()).checkStore();
    return this.holdingWriteLock(fn);
  }

  private async holdingWriteLock<T>(fn: () => Promise<T>, timeoutMs?: number, fence?: () => Promise<void>): Promise<T> {
    const lock = await (await this.locks()).acquireWrite(timeoutMs);
    this.writing = lock;
    try {
      if (lock.fenceNeeded) await fence?.();
      const result = await fn();
      await this.checkWriteLease(); // (step 4: only then is the write acknowledged)
      return result;
    } finally {
      this.writing = undefined;
      await lock.release();
    }
  }

  /**
   * Runs `fn`, which writes only the tables of an index this worker has claimed (training its vector
   * index, which takes long and is done outside the write lock so that adds are not held up), with
   * the claim standing in for the write lease (checkWriteLease).
   */
  async maintaining<T>(claimHeld: () => Promise<boolean>, fn: () => Promise<T>): Promise<T> {
    this.maintenance = claimHeld;
    try {
      return await fn();
    } finally {
      this.maintenance = undefined;
    }
  }

  /**
   * Before each commit to a bucket project's tables (LanceStore.guardWrites): this process must hold
   * the write lease. ConflictError LEASE_LOST when it no longer does (it paused past the lease's
   * expiry, or could not renew it), InternalError WRITE_UNLOCKED for a commit outside `locked`.
   */
  async checkWriteLease(): Promise<void> {
    if (this.writing === undefined && this.maintenance !== undefined) {
      if (await this.maintenance()) return;
      throw new ConflictError("CLAIM_LOST", `This worker lost its claim on an index of ${this.dir} while it trained the index's vector index`, { hint: "Another worker took the index over; it builds the vector index." });
    }
    if (this.writing === undefined) throw new InternalError("WRITE_UNLOCKED", `A write to ${this.dir} was attempted without the project's write lease`);
    if (!(await this.writing.stillHeld())) {
      throw new ConflictError("LEASE_LOST", `This process lost the write lease of ${this.dir} while it wrote: another process took the project over`, {
        hint: "The write may or may not have been applied; run the same command again (adds and deletes can be repeated safely).",
      });
    }
  }

  /** What the worker is doing (written by the worker; null when it never wrote, has cleared it, or the file is damaged). */
  async workerState(): Promise<WorkerState | null> {
    const read = await (await this.docs()).read(WORKER_STATE, WorkerStateSchema);
    return read.ok ? read.value : null;
  }

  async saveWorkerState(state: WorkerState | null): Promise<void> {
    if (state === null) await (await this.docs()).remove(WORKER_STATE);
    else await (await this.docs()).write(WORKER_STATE, state);
  }

  /**
   * The catalog; EnvironmentError CORRUPT_PROJECT when it is damaged, or missing beside data (it
   * cannot be derived from anything else). A project that does not exist yet has no indexes.
   */
  async indexes(): Promise<IndexRecord[]> {
    let read = await (await this.docs()).read(CATALOG, CatalogSchema);
    if (!read.ok && read.missing) {
      if (!(await this.exists())) return [];
      read = await (await this.docs()).read(CATALOG, CatalogSchema); // created meanwhile (exists() would have refused a lost one): read once more
    }
    if (!read.ok) {
      throw damaged(this.where(CATALOG), read.reason, "It lists the indexes and their configurations. Restore it from a backup, or move the project aside and create the indexes again.");
    }
    const ids = new Set<string>();
    return read.value.indexes.map((entry, i) => {
      if (ids.has(entry.id)) throw damaged(this.where(CATALOG), `index ${entry.id} is listed twice`, "Remove one of the two entries.");
      ids.add(entry.id);
      try {
        return { ...entry, configuration: parseCreateIndexBody({ configuration: entry.configuration }).configuration };
      } catch (error) {
        throw damaged(this.where(CATALOG), `indexes.${i}.configuration: ${(error as Error).message}`, "Restore it from a backup, or delete and create that index again.");
      }
    });
  }

  /** Call with the write lock held. */
  async saveIndexes(indexes: IndexRecord[]): Promise<void> {
    await (await this.docs()).write(CATALOG, { version: 1, indexes });
  }

  /**
   * The index's progress; a fresh record before the first save. A damaged progress file is read as
   * a fresh record too: progress is derived state, and indexing again from the start rebuilds it
   * (rows are upserted by object id, so nothing is indexed twice).
   */
  async progress(indexId: string): Promise<IndexProgress> {
    const read = await (await this.docs()).read(progressDoc(indexId), ProgressSchema);
    if (!read.ok) return emptyProgress();
    return { ...read.value, errors: Object.assign(Object.create(null) as IndexProgress["errors"], read.value.errors) };
  }

  async saveProgress(indexId: string, progress: IndexProgress): Promise<void> {
    if (!this.remote) this.mkdir(this.where("progress"));
    await (await this.docs()).write(progressDoc(indexId), progress);
  }

  async removeProgress(indexId: string): Promise<void> {
    await (await this.docs()).remove(progressDoc(indexId));
  }

  /** The last sequence number handed out, as recorded (0 when the file is missing or damaged; see ensureSeqAtLeast). */
  async lastSeq(): Promise<number> {
    const read = await (await this.docs()).read(SEQ, Seq);
    return read.ok ? read.value : 0;
  }

  /**
   * Makes sure the counter is at least `floor` (write lock held): the caller passes the highest
   * sequence number found in stored state, so a lost or damaged counter never hands out a number
   * again.
   */
  async ensureSeqAtLeast(floor: number): Promise<void> {
    if (!(await this.seqKnown()) || (await this.lastSeq()) < floor) await (await this.docs()).write(SEQ, Math.max(floor, await this.lastSeq()));
  }

  /** Whether the sequence counter file is there and readable (when not, stored state must restore it: ensureSeqAtLeast). */
  async seqKnown(): Promise<boolean> {
    return (await (await this.docs()).read(SEQ, Seq)).ok;
  }

  /** The highest sequence number any index's progress refers to. */
  async highestProgressSeq(): Promise<number> {
    let highest = 0;
    for (const index of await this.indexes()) {
      const p = await this.progress(index.id);
      highest = Math.max(highest, p.indexedSeq, p.optimizedSeq, p.processingSeq ?? 0);
    }
    return highest;
  }

  /**
   * Reserves `count` sequence numbers (call with the write lock held) and returns the first.
   * The counter is saved before the objects are written, so a crash leaves a gap, never a reuse.
   */
  async reserveSeq(count: number): Promise<number> {
    const first = (await this.lastSeq()) + 1;
    await (await this.docs()).write(SEQ, first + count - 1);
    return first;
  }
}

/** The LanceDB table of an index's highlight segments. */
export function segmentTableName(indexId: string): string {
  return `segments_${indexId}`;
}

/** The LanceDB table of an index. */
export function indexTableName(indexId: string): string {
  return `index_${indexId}`;
}

/** The LanceDB table of an image index's images: one row per image reference of an object. */
export function imageTableName(indexId: string): string {
  return `images_${indexId}`;
}

/**
 * The tables of an index that hold rows per part of an object, keyed by `object_id`: highlight
 * segments (with `highlights.text`) and images (image indexes).
 */
export function partTables(index: Pick<IndexRecord, "id" | "configuration">): string[] {
  return [
    ...(highlightsEnabled(index.configuration) ? [segmentTableName(index.id)] : []),
    ...(isImageIndex(index.configuration) ? [imageTableName(index.id)] : []),
  ];
}

/** Every table of an index. */
export function indexTables(index: Pick<IndexRecord, "id" | "configuration">): string[] {
  return [indexTableName(index.id), ...partTables(index)];
}
