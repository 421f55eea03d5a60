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
 *   <project>/tmp/                spooled standard input of an add
 *   <project>/worker.json         what the worker is doing (while it runs)
 *   <project>/write.lock, worker.lock, worker.log
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { InternalError } from "./errors.js";
import { withLock } from "./lock.js";
import type { IndexRecord } from "./types.js";

export interface IndexProgress {
  /** Every object with seq <= indexedSeq is in the index table (or in `errors`). */
  indexedSeq: number;
  /** Every object with seq <= optimizedSeq is also covered by the built full-text/vector indexes. */
  optimizedSeq: number;
  /** Highest seq of the batch being embedded right now, or null. */
  processingSeq: number | null;
  /** Objects that could not be indexed, with the reason. */
  errors: Record<string, { seq: number; message: string }>;
}

export const EMPTY_PROGRESS: IndexProgress = { indexedSeq: 0, optimizedSeq: 0, processingSeq: null, errors: {} };

/** What the background worker is doing, for `worker status`. */
export interface WorkerState {
  pid: number;
  /** `indexing` (embedding and writing a batch), `optimizing` (refreshing built indexes), `idle` (waiting for work before exiting) */
  phase: "indexing" | "optimizing" | "idle";
  /** the index being worked on */
  index: string | null;
  /** objects this worker has indexed since it started, and how many are still pending in the current index */
  indexed: number;
  pending: number;
  /** objects per second since the worker started */
  rate: number;
  started_at: string;
  updated_at: string;
}

/** The journal of an add in progress: the object table's version to roll back to. */
export interface AddJournal {
  pid: number;
  objectsVersion: number;
}

interface Catalog {
  version: 1;
  indexes: IndexRecord[];
}

/** Default project directory, relative to the working directory. */
export const DEFAULT_PROJECT_DIR = ".semsearch";

function readJson<T>(file: string, fallback: T): T {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return fallback;
    throw new InternalError("CORRUPT_PROJECT", `cannot read ${file}: ${(error as Error).message}`, { cause: error });
  }
}

/** Writes a file so that readers see the old or the new content, never a mix. */
function writeJsonAtomic(file: string, value: unknown): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(value, null, 2) + "\n");
  renameSync(tmp, file);
}

export class Project {
  readonly dataDir: string;
  readonly writeLock: string;
  readonly workerLock: string;
  readonly workerLog: string;
  private readonly catalogFile: string;
  private readonly progressDir: string;
  private readonly seqFile: string;
  private readonly addJournal: string;
  private readonly workerStateFile: string;
  private readonly tmpDir: string;

  constructor(readonly dir: string) {
    this.dataDir = path.join(dir, "data");
    this.writeLock = path.join(dir, "write.lock");
    this.workerLock = path.join(dir, "worker.lock");
    this.workerLog = path.join(dir, "worker.log");
    this.catalogFile = path.join(dir, "catalog.json");
    this.progressDir = path.join(dir, "progress");
    this.seqFile = path.join(dir, "seq");
    this.addJournal = path.join(dir, "add.journal");
    this.workerStateFile = path.join(dir, "worker.json");
    this.tmpDir = path.join(dir, "tmp");
  }

  /** A fresh file name under the project's tmp/ for spooling input (the caller removes it). */
  spoolFile(): string {
    mkdirSync(this.tmpDir, { recursive: true });
    return path.join(this.tmpDir, `input-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  }

  /** Records (write lock held) that an add is writing, and the object table's version before it. */
  beginAdd(objectsVersion: number): void {
    writeJsonAtomic(this.addJournal, { pid: process.pid, objectsVersion } satisfies AddJournal);
  }

  endAdd(): void {
    rmSync(this.addJournal, { force: true });
  }

  /** An add that started and never finished (its writer died), if any. */
  unfinishedAdd(): AddJournal | null {
    return readJson<AddJournal | null>(this.addJournal, null);
  }

  exists(): boolean {
    return existsSync(this.catalogFile);
  }

  /** Creates the directory layout if missing. */
  init(): void {
    mkdirSync(this.progressDir, { recursive: true });
    mkdirSync(this.dataDir, { recursive: true });
    if (!existsSync(this.catalogFile)) writeJsonAtomic(this.catalogFile, { version: 1, indexes: [] } satisfies Catalog);
  }

  /** Runs `fn` holding the project's write lock, waiting for it up to `timeoutMs` (default 2 minutes). */
  locked<T>(fn: () => Promise<T>, timeoutMs?: number): Promise<T> {
    this.init();
    return withLock(this.writeLock, fn, timeoutMs);
  }

  /** What the worker is doing (written by the worker; null when it never wrote or has cleared it). */
  workerState(): WorkerState | null {
    return readJson<WorkerState | null>(this.workerStateFile, null);
  }

  saveWorkerState(state: WorkerState | null): void {
    if (state === null) rmSync(this.workerStateFile, { force: true });
    else writeJsonAtomic(this.workerStateFile, state);
  }

  indexes(): IndexRecord[] {
    return readJson<Catalog>(this.catalogFile, { version: 1, indexes: [] }).indexes;
  }

  /** Call with the write lock held. */
  saveIndexes(indexes: IndexRecord[]): void {
    writeJsonAtomic(this.catalogFile, { version: 1, indexes } satisfies Catalog);
  }

  /** The index's progress; a fresh empty record (never a shared one: callers change it) before the first save. */
  progress(indexId: string): IndexProgress {
    return readJson<IndexProgress | null>(path.join(this.progressDir, `${indexId}.json`), null) ?? structuredClone(EMPTY_PROGRESS);
  }

  saveProgress(indexId: string, progress: IndexProgress): void {
    writeJsonAtomic(path.join(this.progressDir, `${indexId}.json`), progress);
  }

  removeProgress(indexId: string): void {
    rmSync(path.join(this.progressDir, `${indexId}.json`), { force: true });
  }

  lastSeq(): number {
    return readJson<number>(this.seqFile, 0);
  }

  /**
   * Reserves `count` sequence numbers (call with the write lock held) and returns the first.
   * The counter is saved before the objects are written, so a crash leaves a gap, never a reuse.
   */
  reserveSeq(count: number): number {
    const first = this.lastSeq() + 1;
    writeJsonAtomic(this.seqFile, first + count - 1);
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
