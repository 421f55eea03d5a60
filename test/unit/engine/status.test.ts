import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EngineContext } from "../../../src/engine/context.js";
import { indexTableName, Project } from "../../../src/engine/project.js";
import { indexStatusCounts, objectIndexStatus } from "../../../src/engine/status.js";
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
  it("counts READY, PROCESSING (incl. written-but-not-optimized), UPLOADED and ERROR", async () => {
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
      errors: { o3: { seq: 3, message: 'field "x": not a number' } },
    });

    expect(await indexStatusCounts(ctx, index)).toEqual({ READY: 2, PROCESSING: 3, UPLOADED: 2, ERROR: 1 });
    const states = await Promise.all(["o1", "o3", "o4", "o5", "o8"].map((id) => objectIndexStatus(ctx, index, id, Number(id.slice(1)))));
    expect(states).toEqual([
      { id: index.id, status: "READY", searchable: true },
      { id: index.id, status: "ERROR", searchable: false, error: 'field "x": not a number' },
      { id: index.id, status: "PROCESSING", searchable: true },
      { id: index.id, status: "PROCESSING", searchable: false },
      { id: index.id, status: "UPLOADED", searchable: false },
    ]);
  });
});
