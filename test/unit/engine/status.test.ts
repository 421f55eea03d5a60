import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EngineContext } from "../../../src/engine/context.js";
import { indexTableName, Project } from "../../../src/engine/project.js";
import { buildingState, indexCounts, indexStatusCounts, objectIndexStatus } from "../../../src/engine/status.js";
import type { IndexRecord } from "../../../src/engine/types.js";

const ctx = new EngineContext(new Project(path.join(mkdtempSync(path.join(tmpdir(), "semsearch-status-")), "p")));
afterAll(() => ctx.close());

const index: IndexRecord = {
  id: "idx_status",
  configuration: { index_type: { name: "text" } },
  model: "use-lite-512",
  dimension: 2,
  created_at: "2026-01-01T00:00:00.000Z",
};

describe("processing state derived from progress", () => {
  it("counts READY (committed: a search finds it, built indexes or not), PROCESSING (claimed), UPLOADED and ERROR", async () => {
    const store = await ctx.store();
    const stamp = "2026-01-01T00:00:00.000Z";
    // objects o1..o8 with seq 1..8
    await store.upsertObjects(
      Array.from({ length: 8 }, (_, i) => ({ id: `o${i + 1}`, body: "{}", seq: i + 1, created_at: stamp, updated_at: stamp })),
    );
    await store.createIndexTable(indexTableName(index.id), 2);
    // o1..o4 written to the index; o3 failed; o5..o6 being embedded; o7..o8 not picked up
    await store.upsertIndexRows(
      indexTableName(index.id),
      ["o1", "o2", "o4"].map((id, i) => ({ id, seq: i + 1, text: id, vector: Float32Array.from([1, 0]) })),
    );
    await ctx.project.saveIndexes([index]);
    await ctx.project.saveProgress(index.id, {
      indexedSeq: 4,
      optimizedSeq: 2,
      processingSeq: 6,
      // o8's reason is of an earlier version (seq 2), replaced since: o8 is waiting again, not failed
      errors: { o3: { seq: 3, message: 'field "x": not a number' }, o8: { seq: 2, message: "an earlier version failed" } },
    });

    expect(await indexStatusCounts(ctx, index)).toEqual({ READY: 3, PROCESSING: 2, UPLOADED: 2, ERROR: 1 });
    const states = await Promise.all(["o1", "o3", "o4", "o5", "o8"].map((id) => objectIndexStatus(ctx, index, id, Number(id.slice(1)))));
    expect(states).toEqual([
      { id: index.id, status: "READY", searchable: true },
      { id: index.id, status: "ERROR", searchable: false, error: 'field "x": not a number' },
      { id: index.id, status: "READY", searchable: true }, // (written, not yet in the built indexes: found all the same)
      { id: index.id, status: "PROCESSING", searchable: false },
      { id: index.id, status: "UPLOADED", searchable: false },
    ]);
  });

  it("keeps the index BUILDING, every object READY, until the built indexes have taken the rows in", async () => {
    await ctx.project.saveProgress(index.id, { indexedSeq: 8, optimizedSeq: 2, processingSeq: null, errors: Object.create(null) });
    expect(await indexCounts(ctx, index)).toEqual({ status: { READY: 8, PROCESSING: 0, UPLOADED: 0, ERROR: 0 }, optimizing: true });
    expect(await buildingState(ctx, index)).toBeNull(); // (a search finds them all: no warning)
    await ctx.project.saveProgress(index.id, { indexedSeq: 8, optimizedSeq: 8, processingSeq: null, errors: Object.create(null) });
    expect(await indexCounts(ctx, index)).toEqual({ status: { READY: 8, PROCESSING: 0, UPLOADED: 0, ERROR: 0 }, optimizing: false });
  });
});

describe("ERROR by the objects' current versions", () => {
  it("counts a reason of an object replaced since (waiting again) by its new version only, with more reasons than one query looks up", async () => {
    const own = new EngineContext(new Project(path.join(mkdtempSync(path.join(tmpdir(), "semsearch-status-")), "p")));
    try {
      const store = await own.store();
      const stamp = "2026-01-01T00:00:00.000Z";
      await store.upsertObjects(Array.from({ length: 600 }, (_, i) => ({ id: `p${i + 1}`, body: "{}", seq: i + 1, created_at: stamp, updated_at: stamp })));
      await store.createIndexTable(indexTableName(index.id), 2);
      await own.project.saveIndexes([index]);
      // p1..p250 failed and are current; p301..p600 failed once (seq 1) and were replaced since: they wait
      const errors = Object.create(null) as Record<string, { seq: number; message: string }>;
      for (let i = 1; i <= 250; i++) errors[`p${i}`] = { seq: i, message: "bad" };
      for (let i = 301; i <= 600; i++) errors[`p${i}`] = { seq: 1, message: "bad before" };
      await own.project.saveProgress(index.id, { indexedSeq: 300, optimizedSeq: 300, processingSeq: null, errors });
      expect(await indexStatusCounts(own, index)).toEqual({ READY: 50, PROCESSING: 0, UPLOADED: 300, ERROR: 250 });
    } finally {
      await own.close();
    }
  });
});
