import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { objectRow, unit } from "../../helpers/store-rows.js";
import { parseCreateIndexBody } from "../../../src/engine/config.js";
import { fieldResolver, filterColumn } from "../../../src/engine/filter-fields.js";
import { parseFilter, type FilterNode } from "../../../src/engine/search/filter-syntax.js";
import { compileFilter } from "../../../src/engine/search/filters.js";
import { BITMAP_MAX_DISTINCT, LanceStore } from "../../../src/engine/store/lance-store.js";
import { cosines, scoredIds, withTopFirst } from "../../../src/engine/store/rows.js";

const dir = mkdtempSync(path.join(tmpdir(), "semsearch-store-"));
const storePromise = LanceStore.open(dir);
afterAll(async () => (await storePromise).close());

const row = objectRow;

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
    expect([...(await store.textSearch("index_t", "pears", 10)).ids].sort()).toEqual(["x", "y"]);
    expect((await store.textSearch("index_t", "   ", 10)).ids).toEqual([]);
    const nearest = scoredIds(await store.vectorSearch("index_t", unit(1, 0.1, 0, 0), 2));
    expect(nearest.map((r) => r.id)).toEqual(["x", "z"]);
    expect(nearest[0]?.score).toBeGreaterThan(0.99);
    await store.optimizeIndexTable("index_t");
    await store.upsertIndexRows("index_t", [{ id: "y", seq: 4, text: "yellow bananas", vector: unit(0, 1, 0, 0) }]);
    expect([...(await store.textSearch("index_t", "pears", 10)).ids]).toEqual(["x"]);
    expect([...(await store.textSearch("index_t", "bananas", 10)).ids]).toEqual(["y"]);
    expect(await store.countRows("index_t")).toBe(3);
    await store.deleteIndexRows("index_t", ["x"]);
    expect([...(await store.presentIds("index_t", ["x", "y"]))]).toEqual(["y"]);
    await store.dropTable("index_t");
    expect(await store.hasTable("index_t")).toBe(false);
  });
});

describe("LanceStore filter columns (real LanceDB)", () => {
  const NASTY = ["it's", "a\\", "a\\'b", "'; DROP TABLE objects; --", "x' OR '1'='1", "--", "é\u{1F600}", "%_", "", " padded "];

  it("adds nullable filter columns, writes values, and filters with compiled clauses that match exactly", async () => {
    const store = await storePromise;
    const table = "index_filters";
    await store.createIndexTable(table, 4);
    const name = filterColumn("name");
    const price = filterColumn("price");
    await store.ensureFilterColumns(table, new Map([[name, "string"]]));
    await store.upsertIndexRows(
      table,
      NASTY.map((value, i) => ({ id: `n${i}`, seq: i + 1, text: `row ${i}`, vector: unit(1, i), filters: { [name]: value } })),
    );
    // A column added later: existing rows read null; rows without a value stay null.
    await store.ensureFilterColumns(table, new Map<string, "string" | "double">([[name, "string"], [price, "double"]]));
    await store.upsertIndexRows(table, [
      { id: "p1", seq: 20, text: "priced", vector: unit(0, 1), filters: { [price]: 9.5 } },
      { id: "p2", seq: 21, text: "no values", vector: unit(0, 1) },
    ]);
    expect(await store.filterColumns(table)).toEqual(new Set([name, price]));
    const resolve = fieldResolver(parseCreateIndexBody({ configuration: { index_type: { name: "text" }, fields: { types: { price: "float" } } } }).configuration, await store.filterColumns(table));
    const where = (filter: string) => compileFilter(parseFilter(filter) as FilterNode, resolve);
    for (const [i, value] of NASTY.entries()) {
      const quoted = `"${value.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
      const hits = await store.vectorSearch(table, unit(1, 0), 100, where(`name:${quoted}`));
      expect(hits.ids, value).toEqual([`n${i}`]);
    }
    expect(await store.countRows(table, where("price:<10"))).toBe(1);
    expect(await store.countRows(table, where("price:*"))).toBe(1);
    // NOT includes rows without a value
    expect(await store.countRows(table, where("NOT price:<10"))).toBe(NASTY.length + 1);
    expect((await store.textSearch(table, "priced", 10, where("price:[9 TO 10]"))).ids).toEqual(["p1"]);
    expect((await store.textSearch(table, "priced", 10, where("price:{9.5 TO 10]"))).ids).toEqual([]);
  });

  it("indexes text columns with few values as bitmaps, others as B-trees, and switches a bitmap that outgrows it", async () => {
    const store = await storePromise;
    const table = "index_scalar";
    await store.createIndexTable(table, 4);
    const category = filterColumn("category");
    const label = filterColumn("label");
    const price = filterColumn("price");
    await store.ensureFilterColumns(table, new Map<string, "string" | "double">([[category, "string"], [label, "string"], [price, "double"]]));
    const rows = (from: number, n: number, distinctLabels: boolean) =>
      Array.from({ length: n }, (_, k) => {
        const i = from + k;
        return { id: `r${i}`, seq: i + 1, text: "t", vector: unit(1, i % 7), filters: { [category]: `c${i % 5}`, [label]: distinctLabels ? `l${i}` : "same", [price]: i } };
      });
    await store.upsertIndexRows(table, rows(0, 50, false));
    await store.optimizeIndexTable(table);
    expect(Object.fromEntries(await store.filterIndexes(table))).toEqual({ [category]: "Bitmap", [label]: "Bitmap", [price]: "BTree" });
    await store.upsertIndexRows(table, rows(50, BITMAP_MAX_DISTINCT + 10, true));
    await store.optimizeIndexTable(table);
    expect(Object.fromEntries(await store.filterIndexes(table))).toEqual({ [category]: "Bitmap", [label]: "BTree", [price]: "BTree" });
    expect(await store.countRows(table, `${label} = 'l60'`)).toBe(1);
  });
});

describe("LanceStore objects of an older project", () => {
  it("gets the `base` column on its next write, its old rows null, and keeps them", async () => {
    const old = mkdtempSync(path.join(tmpdir(), "semsearch-store-old-"));
    const lancedb = await import("@lancedb/lancedb");
    const arrow = await import("apache-arrow");
    const db = await lancedb.connect(old);
    const fields: import("apache-arrow").Field[] = ["id", "body", "created_at", "updated_at"].map((name) => new arrow.Field(name, new arrow.Utf8(), false));
    fields.push(new arrow.Field("seq", new arrow.Float64(), false));
    const schema = new arrow.Schema(fields);
    const table = await db.createEmptyTable("objects", schema);
    await table.add([{ id: "old", body: '{"id":"old"}', seq: 1, created_at: "2025-01-01T00:00:00.000Z", updated_at: "2025-01-01T00:00:00.000Z" }]);
    db.close();
    const store = await LanceStore.open(old);
    try {
      expect((await store.getObjects(["old"])).get("old")?.base).toBeNull();
      await store.appendObjects([{ ...row("new", 2), base: "/data/photos" }]);
      await store.upsertObjects([{ ...row("old", 3), base: null }]);
      const rows = await store.getObjects(["old", "new"]);
      expect(rows.get("new")?.base).toBe("/data/photos");
      expect(rows.get("old")).toMatchObject({ seq: 3, base: null });
    } finally {
      store.close();
    }
  });
});

describe("LanceStore full-text ties", () => {
  it("takes the first matches by score, then id, whatever order LanceDB lists them in", async () => {
    const store = await storePromise;
    await store.createIndexTable("index_ties", 4);
    // one per commit, so the rows are in fragments of their own, in no id order
    for (const [i, id] of ["m", "z", "b", "y", "a"].entries()) await store.upsertIndexRows("index_ties", [{ id, seq: i + 1, text: "same pears", vector: unit(1, i, 0, 0) }]);
    await store.upsertIndexRows("index_ties", [
      { id: "top", seq: 9, text: "pears pears pears", vector: unit(0, 1, 0, 0) },
      ...Array.from({ length: 6 }, (_, i) => ({ id: `other${i}`, seq: 10 + i, text: "apples only", vector: unit(0, 0, 1, 0) })),
    ]);
    for (const on of [store, store.snapshot()]) {
      const listed = await on.textSearch("index_ties", "pears", 10);
      expect([...listed.ids].sort()).toEqual(["a", "b", "m", "top", "y", "z"]);
      expect(withTopFirst(listed, 3).ids.slice(0, 3)).toEqual(["top", "a", "b"]);
    }
  });
});

describe("LanceStore snapshots", () => {
  it("keep reading the version they first saw while another writer commits and compacts, and read their row ids back", async () => {
    const store = await storePromise;
    await store.createIndexTable("index_snap", 4);
    await store.upsertIndexRows("index_snap", [
      { id: "p", seq: 1, text: "pears in the orchard", vector: unit(1, 0, 0, 0) },
      { id: "q", seq: 2, text: "pears and apples", vector: unit(1, 1, 0, 0) },
    ]);
    await store.optimizeIndexTable("index_snap");
    const snapshot = store.snapshot();
    const hits = await snapshot.textSearch("index_snap", "pears", 10);
    expect([...hits.ids].sort()).toEqual(["p", "q"]);
    expect(hits.rows?.length).toBe(2);

    // Another writer (a second store, as the worker is a second process) changes, then compacts the table.
    const writer = await LanceStore.open(dir);
    try {
      await writer.deleteIndexRows("index_snap", ["p"]);
      await writer.upsertIndexRows("index_snap", [{ id: "r", seq: 3, text: "pears again", vector: unit(0, 0, 1, 0) }]);
      await writer.optimizeIndexTable("index_snap");
    } finally {
      writer.close();
    }

    // The snapshot still reads the old version: same rows, and its row ids still name them.
    expect([...(await snapshot.textSearch("index_snap", "pears", 10)).ids].sort()).toEqual(["p", "q"]);
    expect(await snapshot.countRows("index_snap")).toBe(2);
    const scored = cosines(unit(1, 0, 0, 0), await snapshot.vectorsOfRows("index_snap", hits));
    const byId = new Map(hits.ids.map((id, i) => [id, scored[i]]));
    expect(byId.get("p")).toBeCloseTo(1, 5);
    expect(byId.get("q")).toBeCloseTo(Math.SQRT1_2, 5);
    // The same as LanceDB's own cosine over the latest rows (q is in both).
    const [exact] = await store.similarities("index_snap", unit(1, 0, 0, 0), ["q"]);
    expect(byId.get("q")).toBeCloseTo(exact?.score as number, 5);

    // The store itself, and a new snapshot, see the latest version.
    expect([...(await store.textSearch("index_snap", "pears", 10)).ids].sort()).toEqual(["q", "r"]);
    expect([...(await store.snapshot().textSearch("index_snap", "pears", 10)).ids].sort()).toEqual(["q", "r"]);
  });

  it("refuses row ids outside a snapshot: the store has no vectorsOfRows, and a snapshot refuses rows that carry none", async () => {
    const store = await storePromise;
    // @ts-expect-error only a snapshot reads rows again by row id
    expect(store.vectorsOfRows).toBeUndefined();
    const fromStore = await store.textSearch("index_snap", "pears", 10);
    expect(fromStore.rows).toBeUndefined();
    await expect(store.snapshot().vectorsOfRows("index_snap", fromStore)).rejects.toThrow(/snapshot/);
  });
});

describe("LanceStore vectors held in memory (a long-running process)", () => {
  it("rescores from held vectors exactly as from read rows, and never from another version's", async () => {
    const held = mkdtempSync(path.join(tmpdir(), "semsearch-store-held-"));
    const store = await LanceStore.open(held, { vectorCacheBytes: 1024 * 1024 });
    const plain = await LanceStore.open(held);
    try {
      await store.createIndexTable("index_held", 4);
      const rows = Array.from({ length: 40 }, (_, i) => ({ id: `o${i}`, seq: i + 1, text: `pears number ${i}`, vector: unit(1, i % 5, (i * 7) % 11, i % 3) }));
      await store.upsertIndexRows("index_held", rows);
      await store.optimizeIndexTable("index_held");
      const query = unit(2, 1, 0, 1);
      const scores = async (on: LanceStore) => {
        const snapshot = on.snapshot();
        const hits = await snapshot.textSearch("index_held", "pears", 100);
        const rescored = cosines(query, await snapshot.vectorsOfRows("index_held", hits));
        const nearest = scoredIds(await snapshot.vectorSearch("index_held", query, 10));
        return { rescored: new Map(hits.ids.map((id, i) => [id, rescored[i]])), nearest };
      };
      const reference = await scores(plain);
      expect(reference.rescored.size).toBe(40);
      // the searches that make the store load the table's vectors, then searches from them
      for (let i = 0; i < 6; i++) {
        expect(await scores(store)).toEqual(reference);
        await store.vectorLoadsSettled();
      }
      // Another writer changes a vector: the next snapshot reads the new one, not the held copy.
      await plain.upsertIndexRows("index_held", [{ id: "o3", seq: 41, text: "pears number 3", vector: unit(0, 0, 0, 1) }]);
      const changed = await scores(store);
      expect(changed.rescored.get("o3")).toBeCloseTo(1 / Math.sqrt(6), 5);
      expect(changed).toEqual(await scores(plain));
    } finally {
      store.close();
      plain.close();
    }
  });
});
