/** Rows and vectors for tests of the store on real LanceDB tables. */
import type { ObjectRow } from "../../src/engine/store/lance-store.js";

/** An object row: `body` is the object as stored (by default just its id). */
export function objectRow(id: string, seq: number, body: object = { id }): ObjectRow {
  return { id, body: JSON.stringify(body), seq, created_at: "2026-01-01T00:00:00.000Z", updated_at: "2026-01-01T00:00:00.000Z" };
}

/** A 4-dimension unit vector from its first components (the rest 0). */
export function unit(...values: number[]): Float32Array {
  const v = new Float32Array(4);
  values.forEach((x, i) => (v[i] = x));
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}
