import { mkdirSync, writeFileSync } from "node:fs";
import { totalmem } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { vectorCacheBytes } from "../../../src/engine/context.js";
import { processMemory } from "../../../src/engine/process-memory.js";
import { RowIndex } from "../../../src/engine/store/rows.js";
import { defaultBudget, MIN_DEFAULT_BUDGET, USES_BEFORE_LOAD, VectorCache, type HeldVectors } from "../../../src/engine/store/vector-cache.js";
import { tempDir } from "../../helpers/temp.js";

const held = (bytes: number): HeldVectors => ({ dimension: 1, rows: new RowIndex(), ids: [], vectors: new Float32Array(bytes / 4), norms: new Float64Array(bytes / 4) });

/** Uses a table at a version until the cache says to load it; returns after how many uses, or null. */
function usesUntilLoad(cache: VectorCache, table: string, version: number, bytes: number, most = 10): number | null {
  for (let use = 1; use <= most; use++) if (cache.use(table, version, bytes)) return use;
  return null;
}

describe("VectorCache", () => {
  it("asks for a table's vectors once a version has been searched a few times, and holds them for that version only", () => {
    const cache = new VectorCache(1000);
    expect(usesUntilLoad(cache, "t", 5, 400)).toBe(USES_BEFORE_LOAD);
    expect(cache.use("t", 5, 400)).toBe(false); // loading: asked once
    expect(cache.get("t", 5)).toBeUndefined();
    const vectors = held(400);
    cache.loaded("t", 5, vectors);
    expect(cache.get("t", 5)).toBe(vectors);
    expect(cache.get("t", 6)).toBeUndefined();
    expect(cache.heldBytes()).toBe(400);
  });

  it("drops a table's vectors when another version is searched, and counts that version's uses afresh", () => {
    const cache = new VectorCache(1000);
    usesUntilLoad(cache, "t", 5, 400);
    cache.loaded("t", 5, held(400));
    expect(cache.use("t", 6, 400)).toBe(false);
    expect(cache.get("t", 5)).toBeUndefined();
    expect(cache.heldBytes()).toBe(0);
    expect(usesUntilLoad(cache, "t", 6, 400)).toBe(USES_BEFORE_LOAD - 1);
  });

  it("keeps no load that finishes after its version was left behind", () => {
    const cache = new VectorCache(1000);
    usesUntilLoad(cache, "t", 5, 400);
    cache.use("t", 6, 400); // a commit while loading
    cache.loaded("t", 5, held(400));
    expect(cache.get("t", 5)).toBeUndefined();
    expect(cache.get("t", 6)).toBeUndefined();
  });

  it("loads only what fits beside the tables held or loading, and evicts none of them for another", () => {
    const cache = new VectorCache(1000);
    expect(usesUntilLoad(cache, "a", 1, 600)).toBe(USES_BEFORE_LOAD);
    // "a" is still loading: its bytes count
    expect(usesUntilLoad(cache, "b", 1, 600)).toBeNull();
    cache.loaded("a", 1, held(600));
    expect(cache.get("a", 1)).toBeDefined();
    expect(usesUntilLoad(cache, "c", 1, 400)).toBe(USES_BEFORE_LOAD);
    // a table larger than the whole budget is never loaded
    expect(usesUntilLoad(new VectorCache(100), "big", 1, 101)).toBeNull();
  });

  it("gives a version up after a failed load, and tries again at the next version", () => {
    const cache = new VectorCache(1000);
    usesUntilLoad(cache, "t", 1, 100);
    cache.failed("t", 1);
    expect(usesUntilLoad(cache, "t", 1, 100)).toBeNull();
    expect(usesUntilLoad(cache, "t", 2, 100)).toBe(USES_BEFORE_LOAD);
  });

  it("forgets a dropped table", () => {
    const cache = new VectorCache(1000);
    usesUntilLoad(cache, "t", 1, 100);
    cache.loaded("t", 1, held(100));
    cache.forget("t");
    expect(cache.get("t", 1)).toBeUndefined();
    expect(cache.heldBytes()).toBe(0);
  });
});

describe("vectorCacheBytes", () => {
  const saved = process.env.SEMSEARCH_VECTOR_CACHE_MB;
  afterEach(() => {
    if (saved === undefined) delete process.env.SEMSEARCH_VECTOR_CACHE_MB;
    else process.env.SEMSEARCH_VECTOR_CACHE_MB = saved;
  });

  it("is SEMSEARCH_VECTOR_CACHE_MB megabytes (0 holds none), else the default; a value that is no size is ignored", () => {
    const at = (value: string | undefined) => {
      if (value === undefined) delete process.env.SEMSEARCH_VECTOR_CACHE_MB;
      else process.env.SEMSEARCH_VECTOR_CACHE_MB = value;
      return vectorCacheBytes();
    };
    const byDefault = defaultBudget(processMemory());
    expect(at(undefined)).toBe(byDefault);
    expect(at("0")).toBe(0);
    expect(at("512")).toBe(512 * 1024 * 1024);
    expect(at("0.5")).toBe(512 * 1024);
    for (const junk of ["", " ", "-1", "lots", "Infinity", "NaN"]) expect(at(junk)).toBe(byDefault);
  });

  it("by default is a quarter of the memory the process may use, at least 256 MiB", () => {
    const GiB = 1024 ** 3;
    expect(defaultBudget(24 * GiB)).toBe(6 * GiB);
    expect(defaultBudget(4 * GiB)).toBe(GiB);
    expect(defaultBudget(GiB)).toBe(MIN_DEFAULT_BUDGET);
    expect(defaultBudget(512 * 1024 ** 2)).toBe(MIN_DEFAULT_BUDGET);
    expect(MIN_DEFAULT_BUDGET).toBe(256 * 1024 ** 2);
    // 300,000 vectors of 512 dimensions and their sums of squares fit beside nothing else on a 4 GiB machine
    expect(300_000 * (512 * 4 + 8)).toBeLessThan(defaultBudget(4 * GiB));
  });
});
