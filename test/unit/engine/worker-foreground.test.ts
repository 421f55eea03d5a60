/**
 * The foreground worker (`semsearch worker`) and its stop signal, in process against real LanceDB and
 * the real model: a stop asked for mid-batch lets that batch commit and then ends the run, without
 * going on to other indexes, optimizing or compacting (a service manager kills a worker that takes
 * too long to stop), nor wait for another writer's lock; a batch whose index was deleted meanwhile
 * is not logged as indexed.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { LanceStore, ObjectRow } from "../../../src/engine/store/lance-store.js";
import type { IndexRecord } from "../../../src/engine/types.js";
import { tempDir } from "../../helpers/temp.js";

// The built engine: the worker's embedding threads load dist/ files (`npm test` builds first).
const dist = (file: string) => new URL(`../../../dist/engine/${file}`, import.meta.url).href;
const { EngineContext } = (await import(dist("context.js"))) as typeof import("../../../src/engine/context.js");
const { runForegroundWorker } = (await import(dist("indexing/worker.js"))) as typeof import("../../../src/engine/indexing/worker.js");
const { indexTableName, Project } = (await import(dist("project.js"))) as typeof import("../../../src/engine/project.js");
const { processStart } = (await import(dist("owner.js"))) as typeof import("../../../src/engine/owner.js");

const stamp = "2026-01-01T00:00:00.000Z";
const row = (id: string, seq: number): ObjectRow => ({ id, body: JSON.stringify({ id, text: `object number ${seq}` }), seq, created_at: stamp, updated_at: stamp });
const indexRecord = (id: string): IndexRecord => ({ id, configuration: { index_type: { name: "text" } }, model: "use-lite-512", dimension: 512, created_at: stamp });

/** A project of `count` objects and the given indexes, none of them built yet. */
async function projectWith(count: number, ids: string[]) {
  const dir = path.join(tempDir("semsearch-foreground-"), "p");
  const ctx = new EngineContext(new Project(dir));
  const store = await ctx.store();
  await store.upsertObjects(Array.from({ length: count }, (_, i) => row(`o${i}`, i + 1)));
  const indexes = ids.map(indexRecord);
  for (const index of indexes) await store.createIndexTable(indexTableName(index.id), index.dimension);
  await ctx.project.saveIndexes(indexes);
  writeFileSync(path.join(dir, "seq"), String(count));
  return { ctx, store, indexes };
}

/** Calls `hook` (then the method) whenever the store's `method` is called. */
function onCall<K extends keyof LanceStore>(store: LanceStore, method: K, hook: (...args: unknown[]) => void): void {
  const original = (store[method] as (...args: unknown[]) => unknown).bind(store);
  (store as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
    hook(...args);
    return original(...args);
  };
}

describe("the foreground worker stopped by a signal", () => {
  it("commits the batch in progress, then stops: no other index, no optimize, no compaction", async () => {
    const { ctx, store } = await projectWith(40, ["idx_a", "idx_b"]);
    const stop = new AbortController();
    // The signal comes while the first index's batch is being committed.
    onCall(store, "upsertIndexRows", () => stop.abort());
    const log: string[] = [];
    await runForegroundWorker(ctx, (message) => log.push(message), { signal: stop.signal, pollMs: 50 });

    expect((await store.rowIds(indexTableName("idx_a"))).length).toBe(40); // the batch in progress committed
    expect(await store.rowIds(indexTableName("idx_b"))).toEqual([]); // and nothing after the signal
    expect(log.filter((line) => /optimized|compacted/.test(line))).toEqual([]);
    expect((await ctx.project.progress("idx_b")).indexedSeq).toBe(0);
    await ctx.close();
  });

  it("a signal while it finds an index caught up stops it before optimizing or compacting", async () => {
    const { ctx, store } = await projectWith(40, ["idx_a"]);
    const stop = new AbortController();
    // The first batch is indexed; the signal comes as the worker looks for more and finds none.
    onCall(store, "objectsAfter", (after) => {
      if (after === 40) stop.abort();
    });
    const log: string[] = [];
    await runForegroundWorker(ctx, (message) => log.push(message), { signal: stop.signal, pollMs: 50 });

    expect(log.some((line) => line.includes("idx_a: indexed 40 objects"))).toBe(true);
    expect(log.filter((line) => /optimized|compacted/.test(line))).toEqual([]);
    expect((await ctx.project.progress("idx_a")).optimizedSeq).toBe(0); // left for the next run
    await ctx.close();
  });

  it("does not log a batch as indexed when its index was deleted while it was embedded", async () => {
    const { ctx, store, indexes } = await projectWith(10, ["idx_gone"]);
    const stop = new AbortController();
    // The index is deleted (from the catalog) after the batch is read, before it is committed.
    onCall(store, "countObjects", () => {
      void ctx.project.saveIndexes(indexes.filter((index) => index.id !== "idx_gone"));
      stop.abort();
    });
    const log: string[] = [];
    await runForegroundWorker(ctx, (message) => log.push(message), { signal: stop.signal, pollMs: 50 });

    expect(await store.rowIds(indexTableName("idx_gone"))).toEqual([]);
    expect(log.filter((line) => line.includes("indexed"))).toEqual([]);
    expect(log.some((line) => line.includes("idx_gone: deleted while"))).toBe(true);
    await ctx.close();
  });
});

describe("the foreground worker waiting for the write lock", () => {
  it("gives up the wait when the signal comes, committing nothing, instead of waiting for the other writer", async () => {
    const { ctx, store } = await projectWith(10, ["idx_a"]);
    // A live process (an `objects add`, say) holds the write lock for two minutes.
    const writer = spawn(process.execPath, ["-e", "setTimeout(() => {}, 120000)"], { stdio: "ignore" });
    try {
      const owner = { pid: writer.pid as number, start: processStart(writer.pid as number) ?? undefined };
      writeFileSync(path.join(ctx.project.dir, "write.lock"), JSON.stringify({ ...owner, nonce: "x", command: "semsearch objects add big.jsonl" }));
      const stop = new AbortController();
      // The signal comes as the worker starts waiting for the lock.
      const locked = ctx.locked.bind(ctx);
      ctx.locked = ((fn, timeoutMs) => {
        stop.abort();
        return locked(fn, timeoutMs);
      }) as typeof ctx.locked;
      const log: string[] = [];
      await runForegroundWorker(ctx, (message) => log.push(message), { signal: stop.signal, pollMs: 50 });

      expect(log.some((line) => line.includes("stopped while waiting for the write lock") && line.includes("objects add big.jsonl"))).toBe(true);
      expect(await store.rowIds(indexTableName("idx_a"))).toEqual([]);
      expect((await ctx.project.progress("idx_a")).indexedSeq).toBe(0);
      expect(writer.exitCode).toBeNull(); // (the lock was still held when it stopped)
    } finally {
      writer.kill("SIGKILL");
      await ctx.close();
    }
  });
});

describe("the foreground worker idle", () => {
  it("writes its idle report once, not at every look for new work (the heartbeat keeps it fresh)", async () => {
    const { ctx, store } = await projectWith(5, ["idx_a"]);
    const stop = new AbortController();
    let looks = 0;
    // Caught up after the first batch, it looks for new work every 50 ms while its models stay loaded: stop after 20 looks.
    onCall(store, "objectsAfter", (after) => {
      if (after === 5 && ++looks === 20) stop.abort();
    });
    const reports: (string | null)[] = [];
    const save = ctx.project.saveWorkerState.bind(ctx.project);
    ctx.project.saveWorkerState = async (state) => {
      reports.push(state?.phase ?? null);
      await save(state);
    };
    await runForegroundWorker(ctx, () => {}, { signal: stop.signal, pollMs: 50 });

    expect(looks).toBe(20);
    expect(reports.filter((phase) => phase === "idle")).toHaveLength(1);
    await ctx.close();
  });
});
