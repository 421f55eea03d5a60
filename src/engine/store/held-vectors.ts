/**
 * Tables' vectors loaded into memory for a long-running process, when vector-cache.ts says so, and
 * rows found among them by LanceDB row id. One holder per store, read by its snapshots: each search
 * of a table at one version counts once towards loading it.
 */
import { InternalError } from "../errors.js";
import { rowNumbers, vectorDimension } from "./arrow-columns.js";
import type { Table } from "./lancedb.js";
import { RowIndex, squaredNorm } from "./rows.js";
import { VectorCache, type HeldVectors } from "./vector-cache.js";

/** Bytes a held row takes: its vector and the sum of its squares. */
function heldRowBytes(dimension: number): number {
  return dimension * 4 + 8;
}

/**
 * Where the first `n` of `rows` (row ids of one snapshot) are among held vectors of the same version,
 * or null when one is not there, or (given `ids`) holds another id: then the rows are read instead.
 */
export function heldPositions(held: HeldVectors, rows: Float64Array, n: number, ids?: readonly string[]): Int32Array | null {
  const positions = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const at = held.rows.get(rows[i] as number);
    if (at < 0 || (ids && held.ids[at] !== ids[i])) return null;
    positions[i] = at;
  }
  return positions;
}

export class VectorHolder {
  /** Which tables' vectors are held (see vector-cache.ts); null when none are wanted, or once closed. */
  private cache: VectorCache | null;
  /** Loads of vectors under way. */
  private readonly loads = new Set<Promise<void>>();
  /** The size of each table's vectors at the version last searched. */
  private readonly sizes = new Map<string, { version: number; bytes: number }>();

  /** @param budgetBytes how much of tables' vectors the process may hold; none when unset */
  constructor(budgetBytes?: number) {
    this.cache = budgetBytes ? new VectorCache(budgetBytes) : null;
  }

  /** The vectors held of table `name` at `version`, if any. */
  get(name: string, version: number): HeldVectors | undefined {
    return this.cache?.get(name, version);
  }

  /**
   * The vectors held of `name` at `version`, if any; counts the use (unless `countUse` is false), and
   * starts loading them (in the background, from `table`, a handle at that version) when the cache
   * says so.
   */
  use(name: string, version: number | undefined, table: Table, countUse: boolean): HeldVectors | undefined {
    const cache = this.cache;
    if (!cache || version === undefined) return undefined;
    const held = cache.get(name, version);
    if (held || !countUse) return held;
    const size = this.sizes.get(name);
    if (size?.version !== version) {
      // the size decides whether the vectors fit: read once per version, off the search's path
      const known = { version, bytes: Number.NaN };
      this.sizes.set(name, known);
      vectorBytes(table)
        .then((bytes) => (known.bytes = bytes))
        .catch(() => {});
      return undefined;
    }
    const bytes = size.bytes;
    if (!Number.isFinite(bytes) || !cache.use(name, version, bytes)) return undefined;
    const load = this.load(table, bytes)
      .then((loaded) => cache.loaded(name, version, loaded))
      .catch(() => cache.failed(name, version))
      .finally(() => this.loads.delete(load));
    this.loads.add(load);
    return undefined;
  }

  /** Drops what is held of a table (dropped). */
  forget(name: string): void {
    this.cache?.forget(name);
    this.sizes.delete(name);
  }

  /** Settles once no load of vectors is under way (for tests). */
  async settled(): Promise<void> {
    while (this.loads.size > 0) await Promise.allSettled([...this.loads]);
  }

  /** Holds nothing more (a load under way stops at its next batch). */
  close(): void {
    this.cache = null;
  }

  /** Reads a table's whole vector column (batch by batch) into one array. */
  private async load(table: Table, bytes: number): Promise<HeldVectors> {
    const schema = await table.schema();
    const dimension = (schema.fields.find((field) => field.name === "vector")?.type as { listSize: number }).listSize;
    const capacity = Math.floor(bytes / heldRowBytes(dimension));
    const vectors = new Float32Array(capacity * dimension);
    const norms = new Float64Array(capacity);
    const rows = new RowIndex();
    const ids: string[] = [];
    for await (const batch of table.query().select(["id", "vector"]).withRowId()) {
      if (!this.cache) throw new InternalError("STORE_CLOSED", "The store was closed while loading vectors");
      const idColumn = batch.getChild("id");
      const rowIds = rowNumbers(batch.getChild("_rowid"), batch.numRows);
      // The batch's vectors are one run of floats (a fixed-size list column): copied a row at a time
      // from it, with no array made per row.
      const data = batch.getChild("vector")?.data[0];
      const floats = data?.children[0]?.values as Float32Array | undefined;
      if (!data || !floats) continue;
      for (let i = 0; i < batch.numRows; i++) {
        if (!data.getValid(i) || ids.length >= capacity) continue;
        const start = i * dimension; // (a sliced list's child values start at its first row already)
        vectors.set(floats.subarray(start, start + dimension), ids.length * dimension);
        norms[ids.length] = squaredNorm(vectors, ids.length * dimension, dimension);
        rows.set(rowIds[i] as number, ids.length);
        ids.push(String(idColumn?.get(i)));
      }
    }
    return { dimension, rows, ids, vectors, norms };
  }
}

/** The size of a table's held vectors: rows × (dimension × 4 bytes, and 8 for the sum of squares). */
async function vectorBytes(table: Table): Promise<number> {
  const [rows, schema] = await Promise.all([table.countRows(), table.schema()]);
  return rows * heldRowBytes(vectorDimension(schema));
}
