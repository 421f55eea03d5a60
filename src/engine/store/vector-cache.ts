/**
 * Whole tables' vectors held in memory by a long-running process (`serve`, an embedding program),
 * so that a search's exact rescoring reads no rows: LanceDB reads a row's vector by row id in about
 * 12 µs, 12 ms for the 1,000 top lexical matches of every hybrid search, against a lookup here.
 *
 * Which tables are held is this file's rule (pure): a table is loaded once searches have used the
 * same version of it a few times (not while the worker commits a batch every second or so), and
 * only while it fits in the budget next to the tables already held: nothing is evicted for another
 * table, so two tables that do not fit together never take turns being loaded.
 */
import type { RowIndex } from "./rows.js";

/** One table's vectors at one version: row `i` of `vectors` holds the vector of the row whose LanceDB row id maps to `i`. */
export interface HeldVectors {
  dimension: number;
  /** Row id (as a number: LanceDB row ids are a fragment number and an offset, well under 2^53) → row index. */
  rows: RowIndex;
  /** Each row's `id`: a lookup whose id differs is a miss, never another row's vector. */
  ids: string[];
  vectors: Float32Array;
  /** Each row's sum of squares (see rows.ts: cosines) */
  norms: Float64Array;
}

interface Entry {
  version: number;
  uses: number;
  /** the vectors' size, once known */
  bytes: number;
  /** loading, held, or given up on for this version (a failed load, or too large) */
  state: "counting" | "loading" | "held" | "skipped";
  held?: HeldVectors;
}

/** The least a process holds by default: 100,000 objects of the bundled model's 512 dimensions take 206 MB. */
export const MIN_DEFAULT_BUDGET = 256 * 1024 * 1024;

/**
 * The budget of a process that may use `memoryBytes` (the machine's memory, or its container's
 * limit), unless the user sets one: a quarter of it, and at least MIN_DEFAULT_BUDGET. A quarter
 * holds 1.5 million vectors of 512 dimensions on a 16 GiB machine, 300,000 (614 MB) on a 4 GiB
 * one, and leaves the rest to LanceDB's caches, the model and other processes.
 */
export function defaultBudget(memoryBytes: number): number {
  return Math.max(MIN_DEFAULT_BUDGET, Math.floor(memoryBytes / 4));
}

/** Searches of one version of a table after which its vectors are loaded. */
export const USES_BEFORE_LOAD = 3;

export class VectorCache {
  private readonly entries = new Map<string, Entry>();

  constructor(readonly budgetBytes: number) {}

  /** The vectors of `table` at `version`, when held. */
  get(table: string, version: number): HeldVectors | undefined {
    const entry = this.entries.get(table);
    return entry?.version === version ? entry.held : undefined;
  }

  /**
   * Records that a search used `table` at `version` (with `bytes` of vectors); true when the caller
   * is to load it now (and then call `loaded` or `failed`). Another version drops the vectors held
   * for the table.
   */
  use(table: string, version: number, bytes: number): boolean {
    let entry = this.entries.get(table);
    // (any other version starts again: searches read the latest, and a version can be an older
    // snapshot's for a moment, or a table's that was dropped and made again)
    if (!entry || entry.version !== version) {
      entry = { version, uses: 0, bytes: 0, state: "counting" };
      this.entries.set(table, entry);
    }
    if (entry.state !== "counting") return false;
    entry.uses += 1;
    if (entry.uses < USES_BEFORE_LOAD) return false;
    if (bytes > this.budgetBytes - this.heldBytes(table)) {
      entry.state = "skipped";
      return false;
    }
    entry.state = "loading";
    entry.bytes = bytes;
    return true;
  }

  /** A load that `use` asked for finished; kept only if the table is still at that version. */
  loaded(table: string, version: number, held: HeldVectors): void {
    const entry = this.entries.get(table);
    if (entry?.version === version && entry.state === "loading") {
      entry.state = "held";
      entry.held = held;
    }
  }

  /** A load that `use` asked for failed: this version is searched without (the next one tries again). */
  failed(table: string, version: number): void {
    const entry = this.entries.get(table);
    if (entry?.version === version && entry.state === "loading") entry.state = "skipped";
  }

  /** Drops a table's vectors (the table was dropped). */
  forget(table: string): void {
    this.entries.delete(table);
  }

  /** Bytes held or being loaded for tables other than `except`. */
  heldBytes(except?: string): number {
    let sum = 0;
    for (const [table, entry] of this.entries) if (table !== except && (entry.state === "held" || entry.state === "loading")) sum += entry.bytes;
    return sum;
  }
}
