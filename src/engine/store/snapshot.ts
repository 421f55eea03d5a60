/**
 * A snapshot of the store: a read-only view in which each table stays at the version it had when
 * the view first used it, so every query of one search reads the same data, even while the worker
 * commits (and compacts) between them, and row ids its queries return can be read again
 * (vectorsOfRows). It has the store's reads (reads.ts) and no writes: a caller holding a Snapshot
 * cannot write through it. Snapshots are cheap: handles are shared between the snapshots of one
 * store at the same versions, and a table's version is read once per snapshot.
 */
import { InternalError } from "../errors.js";
import { vectorDimension } from "./arrow-columns.js";
import type { Database, Tables } from "./database.js";
import { heldPositions, type VectorHolder } from "./held-vectors.js";
import type { Table } from "./lancedb.js";
import { StoreReads } from "./reads.js";
import { squaredNorm, type RowVectors, type ScoredRows } from "./rows.js";

/** Table handles checked out at one version each, shared by the snapshots of one store. */
export type PinnedHandles = Map<string, { version: number; table: Promise<Table> }>;

export class Snapshot extends StoreReads {
  protected readonly tables: Tables;
  /** Each table as pinned at its first use. */
  private readonly pinnedHere = new Map<string, Promise<Table>>();
  /** The version each table is pinned at. */
  private readonly pinnedVersions = new Map<string, number>();
  /** Tables whose use this snapshot has counted towards holding their vectors. */
  private readonly usesCounted = new Set<string>();

  /** Made by LanceStore.snapshot(). */
  constructor(
    private readonly db: Database,
    private readonly pinned: PinnedHandles,
    private readonly vectors: VectorHolder,
  ) {
    super();
    this.tables = {
      db,
      table: (name) => this.pinnedTable(name),
      wrap: (table, what, fn) => db.wrap(table, what, fn, this.pinnedVersions),
      snapshot: {
        heldVectors: (name) => vectors.get(name, this.pinnedVersions.get(name) ?? -1),
        vectorsOfRows: (name, hits, count) => this.vectorsOfRows(name, hits, count),
      },
    };
  }

  private pinnedTable(name: string): Promise<Table> {
    let table = this.pinnedHere.get(name);
    if (!table) {
      table = (async () => {
        const version = await this.db.latestVersion(name);
        this.pinnedVersions.set(name, version);
        const known = this.pinned.get(name);
        if (known?.version === version) return known.table;
        const opened = this.tables.wrap(name, `opening table ${name}`, async () => {
          const handle = await this.db.connection.openTable(name);
          await handle.checkout(version);
          return handle;
        });
        this.pinned.set(name, { version, table: opened });
        opened.catch(() => {
          if (this.pinned.get(name)?.table === opened) this.pinned.delete(name);
        });
        return opened;
      })();
      this.pinnedHere.set(name, table);
    }
    return table;
  }

  /**
   * The stored vectors of the first `count` of rows a query of this snapshot returned, by position:
   * from the vectors held in memory when there are, else read directly by row id (no scan for the
   * ids).
   */
  async vectorsOfRows(name: string, hits: ScoredRows, count = hits.ids.length): Promise<RowVectors> {
    const n = Math.min(count, hits.ids.length);
    const offsets = new Int32Array(n).fill(-1);
    const norms = new Float64Array(n);
    // (no rows: nothing to read, from any store; a query without terms returns none)
    if (n === 0) return { dimension: 0, data: new Float32Array(0), offsets, norms };
    const rows = hits.rows;
    if (!rows) throw new InternalError("NOT_A_SNAPSHOT", "Row ids are read from the snapshot that returned them");
    const table = await this.pinnedTable(name);
    // A search counts once towards loading the table's vectors, however many reads it makes.
    const held = this.vectors.use(name, this.pinnedVersions.get(name), table, !this.usesCounted.has(name));
    this.usesCounted.add(name);
    const found = held ? heldPositions(held, rows, n, hits.ids) : null;
    if (held && found) {
      found.forEach((at, i) => {
        offsets[i] = at * held.dimension;
        norms[i] = held.norms[at] as number;
      });
      return { dimension: held.dimension, data: held.vectors, offsets, norms };
    }
    const wanted = Array.from(rows.subarray(0, n), (row) => BigInt(row));
    const data = await this.tables.wrap(name, `reading vectors of ${name}`, () => table.takeRowIds(wanted).select(["id", "vector"]).toArrow());
    const dimension = vectorDimension(data.schema);
    const positions = new Map<string, number>();
    for (let i = 0; i < n; i++) positions.set(hits.ids[i] as string, i);
    const packed = new Float32Array(n * dimension);
    const ids = data.getChild("id");
    const vectors = data.getChild("vector");
    for (let i = 0; i < data.numRows; i++) {
      const at = positions.get(String(ids?.get(i)));
      const stored = vectors?.get(i) as { toArray(): Float32Array } | null;
      if (at === undefined || !stored) continue;
      packed.set(stored.toArray(), at * dimension);
      offsets[at] = at * dimension;
      norms[at] = squaredNorm(packed, at * dimension, dimension);
    }
    return { dimension, data: packed, offsets, norms };
  }
}
