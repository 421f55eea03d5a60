/**
 * Neural-only paging over a table with an approximate (HNSW) vector index: every page of a query is
 * a slice of one list, though the index answers requests of different sizes with different sets.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rankRows, tableVectors, type RankQuery } from "../../../src/engine/search/rank.js";
import { LanceStore, VECTOR_INDEX_MIN_ROWS } from "../../../src/engine/store/lance-store.js";

const DIM = 16;
const ROWS = VECTOR_INDEX_MIN_ROWS + 1000;
const dir = mkdtempSync(path.join(tmpdir(), "semsearch-vector-paging-"));
let store: LanceStore;

function random(seed: number): () => number {
  let state = seed;
  return () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648) - 0.5;
}

beforeAll(async () => {
  store = await LanceStore.open(dir);
  await store.createIndexTable("index_v", DIM);
  const next = random(11);
  const rows = Array.from({ length: ROWS }, (_, i) => ({ id: `r${String(i).padStart(5, "0")}`, seq: i + 1, text: "row", vector: Float32Array.from({ length: DIM }, next) }));
  for (let i = 0; i < rows.length; i += 2000) await store.upsertIndexRows("index_v", rows.slice(i, i + 2000));
  expect(await store.buildVectorIndexIfDue("index_v")).toBe(true);
  await store.optimizeIndexTable("index_v");
}, 120_000);

afterAll(() => {
  store?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function page(query: Float32Array, offset: number, limit: number): Promise<string[]> {
  const snapshot = store.snapshot();
  const q: RankQuery = { mode: "vector", text: "", vector: query, vectorWeight: 0.4, offset, limit };
  const { ranked } = await rankRows(snapshot, "index_v", q, undefined, tableVectors(snapshot, "index_v"));
  return ranked.top(offset + limit).slice(offset).map((hit) => hit.id);
}

describe("neural-only paging with an HNSW index", () => {
  it("has the index (else this test proves nothing)", async () => {
    expect((await store.vectorIndexType("index_v"))?.toUpperCase()).toContain("HNSW");
  });

  it.each([10, 37])("pages of %i, walked to offset 740, are exactly one request's list", async (limit) => {
    const next = random(5);
    for (let trial = 0; trial < 3; trial++) {
      const query = Float32Array.from({ length: DIM }, next);
      const walked: string[] = [];
      for (let offset = 0; offset < 740; offset += limit) walked.push(...(await page(query, offset, limit)));
      const whole = await page(query, 0, walked.length);
      expect(new Set(walked).size).toBe(walked.length);
      expect(walked).toEqual(whole);
    }
  }, 120_000);
});
