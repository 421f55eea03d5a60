/**
 * The background worker and interrupted writes, in process against real LanceDB and the real model:
 * the worker must never act on rows of an add that has not committed, and work a dead process
 * left half-done is finished before anything else reads the project.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { LanceStore, ObjectRow } from "../../../src/engine/store/lance-store.js";
import type { IndexRecord } from "../../../src/engine/types.js";
import { tempDir } from "../../helpers/temp.js";


// The built engine: the worker's embedding threads load dist/ files (`npm test` builds first).
const dist = (file: string) => new URL(`../../../dist/engine/${file}`, import.meta.url).href;
const { EngineContext } = (await import(dist("context.js"))) as typeof import("../../../src/engine/context.js");
const { runWorker } = (await import(dist("indexing/worker.js"))) as typeof import("../../../src/engine/indexing/worker.js");
const { processStart } = (await import(dist("owner.js"))) as typeof import("../../../src/engine/owner.js");
const { indexTableName, Project } = (await import(dist("project.js"))) as typeof import("../../../src/engine/project.js");

const stamp = "2026-01-01T00:00:00.000Z";
const row = (id: string, seq: number, text: string): ObjectRow => ({ id, body: JSON.stringify({ id, text }), seq, created_at: stamp, updated_at: stamp });
const index: IndexRecord = { id: "idx_recovery", configuration: { index_type: { name: "text" } }, model: "use-lite-512", dimension: 512, created_at: stamp };

/** A live process standing in for an `objects add` that holds the write lock and has written part of its objects. */
function liveWriter(): ChildProcess {
  return spawn(process.execPath, ["-e", "setTimeout(() => {}, 120000)"], { stdio: "ignore" });
}

async function projectWith(count: number) {
  const dir = path.join(tempDir("semsearch-recovery-"), "p");
  const ctx = new EngineContext(new Project(dir));
  const store = await ctx.store();
  await store.upsertObjects(Array.from({ length: count }, (_, i) => row(`o${i}`, i + 1, `first version of object ${i}`)));
  await store.createIndexTable(indexTableName(index.id), index.dimension);
  await ctx.project.saveIndexes([index]);
  writeFileSync(path.join(dir, "seq"), String(count));
  return { dir, ctx, store };
}

describe("the worker and an add that dies before it commits", () => {
  it("never indexes the add's rows, and indexes every restored object after the rollback", async () => {
    const COUNT = 40;
    const { dir, ctx, store } = await projectWith(COUNT);
    // An add (a live process) takes the lock, journals, and replaces every object with seq COUNT+1…
    const writer = liveWriter();
    const owner = { pid: writer.pid as number, start: processStart(writer.pid as number) ?? undefined };
    writeFileSync(path.join(dir, "write.lock"), JSON.stringify({ ...owner, nonce: "x" }));
    writeFileSync(path.join(dir, "add.journal"), JSON.stringify({ ...owner, objectsVersion: await store.objectsVersion() }));
    await store.upsertObjects(Array.from({ length: COUNT }, (_, i) => row(`o${i}`, COUNT + 1 + i, `second version of object ${i}`)));
    writeFileSync(path.join(dir, "seq"), String(2 * COUNT));

    // …a worker starts meanwhile; watch whether it reads pending objects before the add is over.
    const workerCtx = new EngineContext(new Project(dir));
    const workerStore = await workerCtx.store();
    let readDuringAdd = false;
    let addOver = false;
    const objectsAfter = workerStore.objectsAfter.bind(workerStore);
    workerStore.objectsAfter = (async (seq: number, limit: number) => {
      if (!addOver) readDuringAdd = true;
      return objectsAfter(seq, limit);
    }) as LanceStore["objectsAfter"];
    const log: string[] = [];
    const worker = runWorker(workerCtx, (message) => log.push(message));
    // give a worker that reads without the lock every chance to (it would within milliseconds)
    for (let i = 0; i < 40 && !readDuringAdd; i++) await sleep(50);
    // …and the add is killed: the next holder of the lock rolls it back.
    addOver = true;
    writer.kill("SIGKILL");
    await new Promise((resolve) => writer.once("exit", resolve));
    await worker;
    await workerCtx.close();

    expect(readDuringAdd).toBe(false);
    const objects = await store.getObjects(Array.from({ length: COUNT }, (_, i) => `o${i}`));
    expect([...objects.values()].map((o) => o.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: COUNT }, (_, i) => i + 1));
    const indexed = await store.rowIds(indexTableName(index.id));
    expect(indexed.sort()).toEqual([...objects.keys()].sort());
    expect(Object.keys((await ctx.project.progress(index.id)).errors)).toEqual([]);
    await ctx.close();
  });
});

describe("a delete that dies half-way", () => {
  it("is completed by the next process that opens the project", async () => {
    const { dir, ctx, store } = await projectWith(5);
    await store.upsertIndexRows(indexTableName(index.id), [{ id: "o2", seq: 3, text: "x", vector: new Float32Array(512).fill(0.1) }]);
    const dead = spawn(process.execPath, ["-e", ""]);
    await new Promise((resolve) => dead.once("exit", resolve));
    // the object row is gone already, its index row is not
    await store.deleteObjects(["o2"]);
    writeFileSync(path.join(dir, "delete.journal"), JSON.stringify({ pid: dead.pid, ids: ["o2"] }));
    await ctx.close();

    const next = new EngineContext(new Project(dir));
    const reopened = await next.store();
    expect(await reopened.rowIds(indexTableName(index.id))).toEqual([]);
    expect(await reopened.countObjects()).toBe(4);
    await next.close();
  });

  it("with its journal damaged, is completed from the store: rows of objects no longer stored are removed", async () => {
    const { dir, ctx, store } = await projectWith(5);
    const vector = new Float32Array(512).fill(0.1);
    await store.upsertIndexRows(indexTableName(index.id), ["o1", "o3"].map((id, i) => ({ id, seq: i + 2, text: "x", vector })));
    await store.deleteObjects(["o3"]); // o3's delete got as far as the store; o1 is untouched
    writeFileSync(path.join(dir, "delete.journal"), '{"pid": 12, "ids": ["o3", "a\\u0000b"]}'); // an id no delete could have written
    await ctx.close();

    const next = new EngineContext(new Project(dir));
    const reopened = await next.store();
    expect(await reopened.rowIds(indexTableName(index.id))).toEqual(["o1"]);
    expect(await reopened.countObjects()).toBe(4);
    expect(existsSync(path.join(dir, "delete.journal"))).toBe(false);
    await next.close();
  });
});
