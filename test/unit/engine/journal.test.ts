import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EngineContext } from "../../../src/engine/context.js";
import { Project } from "../../../src/engine/project.js";
import type { ObjectRow } from "../../../src/engine/store/lance-store.js";

const row = (id: string, seq: number): ObjectRow => ({ id, body: JSON.stringify({ id }), seq, created_at: "t", updated_at: "t" });
/** The pid of a process that has exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ["-e", "process.exit(0)"]).pid as number;
}

async function projectWithThree() {
  const dir = path.join(mkdtempSync(path.join(tmpdir(), "semsearch-journal-")), "p");
  const ctx = new EngineContext(new Project(dir));
  const store = await ctx.store();
  await store.upsertObjects([row("a", 1), row("b", 2), row("c", 3)]);
  return { dir, ctx, store };
}

/** What an add killed mid-way leaves: its journal (writer dead) and some of its batches written. */
async function abandonAdd(dir: string, ctx: EngineContext) {
  const store = await ctx.store();
  writeFileSync(path.join(dir, "add.journal"), JSON.stringify({ pid: deadPid(), objectsVersion: await store.objectsVersion() }));
  await store.upsertObjects([row("d", 4), row("a", 5)]);
  expect(await store.countObjects()).toBe(4);
}

describe("an add interrupted mid-way is rolled back", () => {
  it("by the next process that opens the project, before it reads anything", async () => {
    const { dir, ctx } = await projectWithThree();
    await abandonAdd(dir, ctx);
    await ctx.close();
    const next = new EngineContext(new Project(dir));
    const store = await next.store();
    expect(await store.countObjects()).toBe(3);
    expect((await store.getObjects(["a"])).get("a")?.seq).toBe(1); // the replaced object is back too
    expect(existsSync(path.join(dir, "add.journal"))).toBe(false);
    await next.close();
  });

  it("by the next writer of an open project, before it writes", async () => {
    const { dir, ctx, store } = await projectWithThree();
    await abandonAdd(dir, ctx);
    await ctx.locked(async () => {
      expect(await store.countObjects()).toBe(3);
    });
    expect(existsSync(path.join(dir, "add.journal"))).toBe(false);
    await ctx.close();
  });

  it("an add into a table that did not exist yet rolls back to empty", async () => {
    const dir = path.join(mkdtempSync(path.join(tmpdir(), "semsearch-journal-")), "p");
    const ctx = new EngineContext(new Project(dir));
    const store = await ctx.store();
    writeFileSync(path.join(dir, "add.journal"), JSON.stringify({ pid: deadPid(), objectsVersion: await store.objectsVersion() }));
    await store.upsertObjects([row("x", 1)]);
    await ctx.locked(async () => {
      expect(await store.countObjects()).toBe(0);
    });
    await ctx.close();
  });

  it.each(["", '{"pid": 1, "objectsVers', "\u0000garbage \u00ff{["])("a damaged journal (%j) is reported (exit 6) rather than guessed at, and removing it lets the project open as it is", async (text) => {
    const { dir, ctx } = await projectWithThree();
    await abandonAdd(dir, ctx);
    writeFileSync(path.join(dir, "add.journal"), text);
    await ctx.close();
    const next = new EngineContext(new Project(dir));
    await expect(next.store()).rejects.toMatchObject({ code: "CORRUPT_PROJECT", exitCode: 6, message: expect.stringContaining("add.journal") });
    rmSync(path.join(dir, "add.journal"));
    expect(await (await next.store()).countObjects()).toBe(4);
    await next.close();
  });

  it.each([
    ["a version the table does not have", (v: number) => ({ pid: 1, objectsVersion: v + 50 })],
    ["version 0 for a table that existed before the add", () => ({ pid: 1, objectsVersion: 0 })],
  ])("a journal naming %s is reported, not acted on (nothing is deleted)", async (_, journal) => {
    const { dir, ctx, store } = await projectWithThree();
    writeFileSync(path.join(dir, "add.journal"), JSON.stringify(journal(await store.objectsVersion())));
    utimesSync(path.join(dir, "add.journal"), new Date(), new Date(Date.now() + 5000));
    await ctx.close();
    const next = new EngineContext(new Project(dir));
    await expect(next.store()).rejects.toMatchObject({ code: "CORRUPT_PROJECT", exitCode: 6 });
    rmSync(path.join(dir, "add.journal"));
    expect(await (await next.store()).countObjects()).toBe(3);
    await next.close();
  });

  it("a live writer's journal is left alone by readers", async () => {
    const { dir, ctx, store } = await projectWithThree();
    writeFileSync(path.join(dir, "add.journal"), JSON.stringify({ pid: process.pid, objectsVersion: await store.objectsVersion() }));
    await store.upsertObjects([row("d", 4)]);
    const reader = new EngineContext(new Project(dir));
    expect(await (await reader.store()).countObjects()).toBe(4);
    expect(existsSync(path.join(dir, "add.journal"))).toBe(true);
    await reader.close();
    await ctx.close();
  });
});

describe("an index create or delete interrupted mid-way", () => {
  const record = (id: string) => ({ id, configuration: { index_type: { name: "text" } }, model: "m", dimension: 4, created_at: "t" }) as const;

  async function projectWithIndex() {
    const { dir, ctx, store } = await projectWithThree();
    await store.createIndexTable("index_idx_kept", 4);
    await ctx.project.saveIndexes([record("idx_kept") as never]);
    return { dir, ctx, store };
  }

  it("a create the catalog does not list is undone: the tables its journal names are dropped, no other", async () => {
    const { dir, ctx, store } = await projectWithIndex();
    await store.createIndexTable("index_idx_new", 4);
    await store.createIndexTable("index_idx_stray", 4); // named by no journal (an older version's leftover)
    writeFileSync(path.join(dir, "index.journal"), JSON.stringify({ pid: deadPid(), op: "create", id: "idx_new", tables: ["index_idx_new", "segments_idx_new"] }));
    await ctx.locked(async () => {});
    expect((await store.tableNames()).sort()).toEqual(["index_idx_kept", "index_idx_stray", "objects"]);
    expect(existsSync(path.join(dir, "index.journal"))).toBe(false);
    await ctx.close();
  });

  it("a create the catalog lists had finished: nothing is dropped", async () => {
    const { dir, ctx, store } = await projectWithIndex();
    writeFileSync(path.join(dir, "index.journal"), JSON.stringify({ pid: deadPid(), op: "create", id: "idx_kept", tables: ["index_idx_kept"] }));
    await ctx.locked(async () => {});
    expect(await store.tableNames()).toContain("index_idx_kept");
    expect((await ctx.project.indexes()).map((index) => index.id)).toEqual(["idx_kept"]);
    await ctx.close();
  });

  it("a delete is completed: the index leaves the catalog and its tables are dropped", async () => {
    const { dir, ctx, store } = await projectWithIndex();
    writeFileSync(path.join(dir, "index.journal"), JSON.stringify({ pid: deadPid(), op: "delete", id: "idx_kept", tables: ["index_idx_kept"] }));
    await ctx.locked(async () => {});
    expect(await store.tableNames()).toEqual(["objects"]);
    expect(await ctx.project.indexes()).toEqual([]);
    await ctx.close();
  });

  it.each([
    ["not JSON", "{"],
    ["empty", ""],
    ["cut short", '{"pid": 1, "op": "del'],
    ["naming the object table", JSON.stringify({ pid: 1, op: "delete", id: "idx_kept", tables: ["objects"] })],
    ["naming another index's table", JSON.stringify({ pid: 1, op: "delete", id: "idx_new", tables: ["index_idx_kept"] })],
  ])("a journal %s drops nothing: exit 6 naming it, until a person removes it", async (_what, text) => {
    const { dir, store } = await projectWithIndex();
    writeFileSync(path.join(dir, "index.journal"), text);
    const next = new EngineContext(new Project(dir));
    await expect(next.store()).rejects.toMatchObject({ code: "CORRUPT_PROJECT", exitCode: 6, message: expect.stringContaining("index.journal") });
    expect((await store.tableNames()).sort()).toEqual(["index_idx_kept", "objects"]);
    rmSync(path.join(dir, "index.journal"));
    expect(await (await next.store()).countObjects()).toBe(3);
    await next.close();
  });
});

