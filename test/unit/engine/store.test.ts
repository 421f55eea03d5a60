import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LanceStore, type ObjectRow } from "../../../src/engine/store/lancedb.js";

const dir = mkdtempSync(path.join(tmpdir(), "semsearch-store-"));
const storePromise = LanceStore.open(dir);
afterAll(async () => (await storePromise).close());

const row = (id: string, seq: number, body: object = { id }): ObjectRow => ({
  id,
  body: JSON.stringify(body),
  seq,
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
});

function unit(...values: number[]): Float32Array {
  const v = new Float32Array(4);
  values.forEach((x, i) => (v[i] = x));
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

describe("LanceStore objects", () => {
  it("upserts by id, counts by seq range, reads back in seq order", async () => {
    const store = await storePromise;
    await store.upsertObjects([row("a", 1), row("b", 2), row("c'quote", 3)]);
    await store.upsertObjects([row("a", 4, { id: "a", v: 2 })]);
    expect(await store.countObjects()).toBe(3);
    expect(await store.countObjects(2)).toBe(2);
    expect(await store.countObjects(-1, 2)).toBe(1);
    expect((await store.objectsAfter(1, 10)).map((r) => r.id)).toEqual(["b", "c'quote", "a"]);
    const got = await store.getObjects(["a", "c'quote", "zzz"]);
    expect(JSON.parse(got.get("a")?.body ?? "")).toEqual({ id: "a", v: 2 });
    expect(got.has("c'quote")).toBe(true);
    expect(got.has("zzz")).toBe(false);
  });

  it("deletes by id, even with quotes in the id", async () => {
    const store = await storePromise;
    await store.deleteObjects(["c'quote"]);
    expect(await store.countObjects()).toBe(2);
  });
});

describe("LanceStore index tables", () => {
  it("searches text (BM25) and vectors (cosine) from the first row on", async () => {
    const store = await storePromise;
    await store.createIndexTable("index_t", 4);
    await store.upsertIndexRows("index_t", [
      { id: "x", seq: 1, text: "red apples and pears", vector: unit(1, 0, 0, 0) },
      { id: "y", seq: 2, text: "green pears", vector: unit(0, 1, 0, 0) },
      { id: "z", seq: 3, text: "blue sky", vector: unit(1, 1, 0, 0) },
    ]);
    expect((await store.textSearch("index_t", "pears", 10)).map((r) => r.id).sort()).toEqual(["x", "y"]);
    expect(await store.textSearch("index_t", "   ", 10)).toEqual([]);
    const nearest = await store.vectorSearch("index_t", unit(1, 0.1, 0, 0), 2);
    expect(nearest.map((r) => r.id)).toEqual(["x", "z"]);
    expect(nearest[0]?.score).toBeGreaterThan(0.99);
    await store.optimizeIndexTable("index_t");
    await store.upsertIndexRows("index_t", [{ id: "y", seq: 4, text: "yellow bananas", vector: unit(0, 1, 0, 0) }]);
    expect((await store.textSearch("index_t", "pears", 10)).map((r) => r.id)).toEqual(["x"]);
    expect((await store.textSearch("index_t", "bananas", 10)).map((r) => r.id)).toEqual(["y"]);
    expect(await store.countRows("index_t")).toBe(3);
    await store.deleteIndexRows("index_t", ["x"]);
    expect([...(await store.presentIds("index_t", ["x", "y"]))]).toEqual(["y"]);
    await store.dropTable("index_t");
    expect(await store.hasTable("index_t")).toBe(false);
  });
});
