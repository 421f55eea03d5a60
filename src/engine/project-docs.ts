/**
 * Where a project keeps its small state documents (the catalog, progress, the sequence counter,
 * journals, the worker's state): files in a local project's directory, or versioned records in a
 * bucket's state store (state/record.ts). Project reads and writes them by name
 * (`catalog.json`, `progress/<id>.json`, …) through this one interface, and never knows which.
 */
import type * as v from "valibot";
import path from "node:path";
import { statSync } from "node:fs";
import { parseState, readState, removeState, writeState, type StateRead } from "./state-files.js";
import { COMPACT_EVERY, compactRecord, readRecord, RecordUnreadable, updateRecord, type RecordVersion } from "./state/record.js";
import type { StateStore } from "./state/store.js";

export interface ProjectDocs {
  /** Where document `name` is, for messages (a path, or an `s3://` address). */
  where(name: string): string;
  read<T>(name: string, schema: v.GenericSchema<unknown, T>): Promise<StateRead<T>>;
  /** `mode`: a file only its owner may read (API key digests); a bucket's records have no modes. */
  write(name: string, value: unknown, mode?: number): Promise<void>;
  /** Removes the document (absent is fine). */
  remove(name: string): Promise<void>;
  /** When the document was last written (ms since the epoch), or null without one. */
  writtenAt(name: string): Promise<number | null>;
}

/** A local project's documents: JSON files written atomically (state-files.ts). */
export class FileDocs implements ProjectDocs {
  constructor(private readonly dir: string) {}

  /** Where document `name` of the project in `dir` is (also for messages before the documents are opened). */
  static path(dir: string, name: string): string {
    return path.join(dir, ...name.split("/"));
  }

  where(name: string): string {
    return FileDocs.path(this.dir, name);
  }

  async read<T>(name: string, schema: v.GenericSchema<unknown, T>): Promise<StateRead<T>> {
    return readState(this.where(name), schema);
  }

  /** (a document in a folder, `progress/…`, needs its folder made first: Project makes it, with its rules for a project's folders) */
  async write(name: string, value: unknown, mode?: number): Promise<void> {
    writeState(this.where(name), value, mode);
  }

  async remove(name: string): Promise<void> {
    removeState(this.where(name));
  }

  async writtenAt(name: string): Promise<number | null> {
    try {
      return statSync(this.where(name)).mtimeMs;
    } catch {
      return null;
    }
  }
}

/**
 * A bucket project's documents: each a versioned record under `state/` (state/record.ts), the newest
 * version its value. A removal writes an empty version, read as no document. Written under the
 * project's write lease, so a write replaces whatever is newest, and old versions may be compacted
 * away (record.ts); the one exception, the worker's state, is a report whose lost write costs nothing.
 */
export class RecordDocs implements ProjectDocs {
  /**
   * The newest version of each document this process has read or written, and when (performance.now()):
   * a read lists from it (not every version since the first) and reads the newest version again (it
   * may have been removed and made again), unless reads may be `maxAgeMs` old and it is younger.
   */
  private readonly known = new Map<string, { record: RecordVersion; at: number }>();

  constructor(
    private readonly store: StateStore,
    /** the project's address (`s3://bucket/prefix`), for messages */
    private readonly project: string,
    private readonly options: {
      /** How old a read may be (a server's, which reads the catalog, progress and journals at each search); 0: read each time. */
      maxAgeMs?: number;
      /** Whether reads must be fresh now (the process holds the write lock: what it reads, it changes). */
      mustBeFresh?: () => boolean;
    } = {},
  ) {}

  /** Where document `name` of the project at `project` is, for messages (also before the store is opened). */
  static address(project: string, name: string): string {
    return `${project}/state/${name}`;
  }

  where(name: string): string {
    return RecordDocs.address(this.project, name);
  }

  private async newest(name: string): Promise<RecordVersion | null> {
    const known = this.known.get(name);
    if (known !== undefined && performance.now() - known.at < (this.options.maxAgeMs ?? 0) && this.options.mustBeFresh?.() !== true) return known.record;
    const record = await readRecord(this.store, name, known?.record);
    // (a document found missing is not kept: a server that took a new project's missing catalog for
    // the truth a moment after another machine wrote one would write an empty one over it)
    if (record !== null) this.known.set(name, { record, at: performance.now() });
    return record;
  }

  async read<T>(name: string, schema: v.GenericSchema<unknown, T>): Promise<StateRead<T>> {
    let record: RecordVersion | null;
    try {
      record = await this.newest(name);
    } catch (error) {
      // (damage the caller decides on, as on a damaged file: the catalog is refused, progress rebuilt)
      if (error instanceof RecordUnreadable) return { ok: false, missing: false, reason: `its newest version ${error.key} is not a record` };
      throw error;
    }
    if (record === null || record.body === "") return { ok: false, missing: true, reason: "missing" };
    return parseState(record.body, schema);
  }

  async write(name: string, value: unknown): Promise<void> {
    const body = JSON.stringify(value);
    await this.written(name, await updateRecord(this.store, name, () => body));
  }

  async remove(name: string): Promise<void> {
    await this.written(name, await updateRecord(this.store, name, (current) => (current === null || current === "" ? null : "")));
  }

  /** The names at the top of the state (documents, folders of documents, `leases`), for a copy that must find it empty. */
  async names(): Promise<string[]> {
    return this.store.list("");
  }

  /** Notes the version written, and compacts the record at every COMPACT_EVERY-th (its writes are under the write lease: see record.ts). */
  private async written(name: string, version: RecordVersion | null): Promise<void> {
    if (version === null) return;
    this.known.set(name, { record: version, at: performance.now() }); // (its own writes, read at once)
    if (version.version % COMPACT_EVERY === 0) await compactRecord(this.store, name, version.version);
  }

  async writtenAt(name: string): Promise<number | null> {
    const record = await this.newest(name);
    return record === null || record.body === "" ? null : record.writtenAt;
  }
}
