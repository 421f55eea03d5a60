/**
 * Every write killed at every step (SIGKILL at named crash points, SEMSEARCH_FAILPOINT) through the
 * real CLI and its background worker, on one project: after each kill, the next commands finish or
 * undo the interrupted work, and the project is consistent — every stored object indexed exactly
 * once in every index, no rows of deleted objects, no half-added objects, no journals, spooled
 * input or tables left behind. Lost or damaged small state files (`seq`, progress) are survived too.
 */
import { existsSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cliJson, runCli, tempProject, type CliResult } from "../helpers/cli.js";

type StoreModule = typeof import("../../src/engine/store/lance-store.js");

async function openStore(project: string) {
  const { LanceStore } = (await import(new URL("../../dist/engine/store/lance-store.js", import.meta.url).href)) as StoreModule;
  return LanceStore.open(path.join(project, "data"));
}

const line = (id: string, text: string) => JSON.stringify({ id, title: `Title ${id}`, body: text });
const objects = (prefix: string, count: number, word = "meadow") =>
  Array.from({ length: count }, (_, i) => line(`${prefix}${i}`, `The ${word} number ${i} lies by the river. It is quiet there.`)).join("\n");

function killed(result: CliResult): void {
  expect(result.signal, `expected the command to be killed at its crash point\n${result.stderr}`).toBe("SIGKILL");
}

/** The project is consistent: every index READY holding exactly the stored objects, once each. */
async function consistent(project: string): Promise<{ ids: string[]; indexes: string[] }> {
  const { indexes } = await cliJson(project, ["index", "list"]);
  for (const index of indexes) await cliJson(project, ["index", "status", index.id, "--wait"]);
  const store = await openStore(project);
  try {
    const ids = (await store.rowIds("objects")).sort();
    expect(new Set(ids).size).toBe(ids.length);
    for (const index of indexes) {
      const { status } = await cliJson(project, ["index", "status", index.id]);
      expect(status).toEqual({ UPLOADED: 0, PROCESSING: 0, READY: ids.length, ERROR: 0 });
      expect((await store.rowIds(`index_${index.id}`)).sort()).toEqual(ids);
      if (index.configuration.index_type.highlights?.text) {
        const owners = new Set([...(await store.segmentInfo(`segments_${index.id}`, await store.rowIds(`segments_${index.id}`))).values()].map((s) => s.object_id));
        expect([...owners].sort()).toEqual(ids);
      }
    }
    const tables = (await store.tableNames()).filter((name) => name !== "objects").sort();
    expect(tables).toEqual(indexes.flatMap((index: { id: string; configuration: { index_type: { highlights?: { text?: boolean } } } }) => [`index_${index.id}`, ...(index.configuration.index_type.highlights?.text ? [`segments_${index.id}`] : [])]).sort());
    for (const file of ["add.journal", "delete.journal"]) expect(existsSync(path.join(project, file)), file).toBe(false);
    expect(existsSync(path.join(project, "tmp")) ? readdirSync(path.join(project, "tmp")) : []).toEqual([]);
    return { ids, indexes: indexes.map((index: { id: string }) => index.id) };
  } finally {
    store.close();
  }
}

describe("writes killed at every step leave a consistent project", () => {
  it("adds, deletes, the worker, index create and index delete", async () => {
    const project = tempProject();
    const crash = (point: string, args: string[], input?: string) =>
      runCli(["--project", project, ...args], { env: { SEMSEARCH_FAILPOINT: point }, input });

    await cliJson(project, ["objects", "add", "-"], { input: objects("a", 30) });
    await cliJson(project, ["index", "create", "--searchable", "title,body"]);
    await cliJson(project, ["index", "create", "--searchable", "body", "--highlights"]);
    let state = await consistent(project);
    expect(state.ids).toHaveLength(30);

    // An add killed after its journal, after a batch, or once everything is written but not yet acknowledged: nothing of it stays.
    for (const point of ["add:journal", "add:batch", "add:written"]) {
      killed(await crash(point, ["objects", "add", "-"], `${objects("a", 5, "glacier")}\n${objects("b", 5)}`));
      state = await consistent(project);
      expect(state.ids, point).toHaveLength(30);
      const search = await cliJson(project, ["search", state.indexes[0] as string, "glacier", "--mode", "lexical"]);
      expect(search.results, point).toEqual([]);
    }

    // A delete killed at each step is completed by the next command: the object is gone everywhere.
    for (const [point, id] of [["delete:journal", "a1"], ["delete:objects", "a2"], ["delete:index-rows", "a3"]] as const) {
      killed(await crash(point, ["objects", "delete", id]));
      state = await consistent(project);
      expect(state.ids, point).not.toContain(id);
      expect(state.ids, point).toHaveLength(29 - ["delete:journal", "delete:objects", "delete:index-rows"].indexOf(point));
    }

    // The worker killed after reading a batch, and after writing its rows but before its progress: resumed, nothing twice.
    for (const point of ["worker:read", "worker:rows"]) {
      const added = await runCli(["--project", project, "--json", "objects", "add", "-"], { env: { SEMSEARCH_FAILPOINT: point }, input: objects(`w${point.length}`, 4, "harbour") });
      expect(added.exitCode, added.stderr).toBe(0);
      state = await consistent(project);
      expect(state.ids.filter((id) => id.startsWith(`w${point.length}`)), point).toHaveLength(4);
    }

    // index create killed between its tables and the catalog; index delete killed between the catalog and its tables.
    killed(await crash("index-create:tables", ["index", "create", "--searchable", "body", "--highlights"]));
    const [dropping] = state.indexes;
    killed(await crash("index-delete:catalog", ["index", "delete", dropping as string]));
    await cliJson(project, ["index", "create", "--searchable", "title"]); // a later write drops what no index owns
    state = await consistent(project);
    expect(state.indexes).not.toContain(dropping);
    expect(state.indexes).toHaveLength(2);
  });

  it("standard input spooled by a killed add is removed by the next command", async () => {
    const project = tempProject();
    await cliJson(project, ["objects", "add", "-"], { input: objects("s", 3) });
    killed(await runCli(["--project", project, "objects", "add", "-"], { env: { SEMSEARCH_FAILPOINT: "add:journal" }, input: objects("t", 3) }));
    expect(readdirSync(path.join(project, "tmp"))).toHaveLength(1);
    await cliJson(project, ["objects", "list"]);
    expect(readdirSync(path.join(project, "tmp"))).toEqual([]);
  });
});

describe("lost or damaged small state files", () => {
  it("a deleted or damaged seq file never makes new objects reuse old numbers (they are indexed)", async () => {
    const project = tempProject();
    await cliJson(project, ["objects", "add", "-"], { input: objects("a", 10) });
    const { id } = await cliJson(project, ["index", "create", "--searchable", "title,body"]);
    await cliJson(project, ["index", "status", id, "--wait"]);
    // the last objects deleted too, so the table's highest number is below the index's watermark
    await cliJson(project, ["objects", "delete", "a9"]);
    rmSync(path.join(project, "seq"));
    await cliJson(project, ["objects", "add", "-"], { input: objects("b", 5) });
    writeFileSync(path.join(project, "seq"), "not a number");
    await cliJson(project, ["objects", "add", "-"], { input: objects("c", 5) });
    const state = await consistent(project);
    expect(state.ids).toHaveLength(19);
  });

  it("a damaged progress file makes the index rebuild, not fail", async () => {
    const project = tempProject();
    await cliJson(project, ["objects", "add", "-"], { input: objects("a", 6) });
    const { id } = await cliJson(project, ["index", "create", "--searchable", "title,body"]);
    await cliJson(project, ["index", "status", id, "--wait"]);
    writeFileSync(path.join(project, "progress", `${id}.json`), '{"indexedSeq": 3, "optimizedSeq": "x"');
    const state = await consistent(project);
    expect(state.ids).toHaveLength(6);
  });
});

describe("a failure after an add has committed", () => {
  it("compaction failing (a full disk, say) is a warning: the add succeeded and its objects are there", async () => {
    const project = tempProject();
    const many = Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ id: `m${i}` })).join("\n");
    const result = await runCli(["--project", project, "--json", "objects", "add", "-"], { input: many, env: { SEMSEARCH_FAILPOINT: "add:compact:throw" } });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).count).toBe(20_000);
    expect(JSON.parse(result.stderr)).toEqual({ warnings: [{ code: "COMPACTION_FAILED", message: expect.stringContaining("The objects were added, but compacting the object table failed") }] });
    const store = await openStore(project);
    expect(await store.countObjects()).toBe(20_000);
    store.close();
  });
});

describe("more interrupted and changed work", () => {
  it("a killed worker is resumed by reading commands even when the seq file is lost too", async () => {
    const project = tempProject();
    const failing = { env: { SEMSEARCH_FAILPOINT: "worker:read" } };
    // every worker these commands start dies before it reads anything; then the counter file goes
    await cliJson(project, ["objects", "add", "-"], { input: objects("a", 5), ...failing });
    const { id } = await cliJson(project, ["index", "create"], failing);
    await cliJson(project, ["objects", "add", "-"], { input: objects("b", 6), ...failing });
    rmSync(path.join(project, "seq"));
    let status = { READY: 0 };
    for (let i = 0; i < 150 && (status.READY !== 11 || !existsSync(path.join(project, "seq"))); i++) {
      status = (await cliJson(project, ["index", "status", id])).status; // no --wait: a plain read resumes the worker
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(status).toMatchObject({ READY: 11, UPLOADED: 0, PROCESSING: 0 });
    expect(existsSync(path.join(project, "seq"))).toBe(true);
  });

  it("a file changed between the add's two passes adds nothing (exit 5), rather than acknowledging what it did not write", async () => {
    const project = tempProject();
    const file = path.join(path.dirname(project), "input.jsonl");
    writeFileSync(file, objects("x", 3000));
    const run = runCli(["--project", project, "--json", "objects", "add", file], { env: { SEMSEARCH_FAILPOINT: "add:journal:pause" } });
    // the add pauses right after it journals (its first pass is over): replace the file then
    for (let i = 0; i < 300 && !existsSync(path.join(project, "add.journal")); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    writeFileSync(`${file}.new`, objects("x", 10));
    renameSync(`${file}.new`, file);
    const result = await run;
    expect(result.exitCode, result.stderr).toBe(5);
    expect(JSON.parse(result.stderr).errors[0]).toMatchObject({ code: "INPUT_CHANGED", message: expect.stringContaining("nothing was added") });
    expect(await cliJson(project, ["objects", "list"])).toEqual({ objects: [] });
  });

  it("--wait that gives up still prints what was committed: the add's result, the new index's id", async () => {
    const project = tempProject();
    await cliJson(project, ["objects", "add", "-"], { input: objects("a", 3) });
    // no worker ever gets anything done here: each dies before it reads
    await cliJson(project, ["index", "create"], { env: { SEMSEARCH_FAILPOINT: "worker:read" } });
    const added = await runCli(["--project", project, "--json", "objects", "add", "-", "--wait", "--timeout", "1"], { input: Array.from({ length: 4 }, (_, i) => JSON.stringify({ title: `untitled ${i}` })).join("\n"), env: { SEMSEARCH_FAILPOINT: "worker:read" } });
    expect(added.exitCode, added.stderr).toBe(5);
    expect(JSON.parse(added.stdout)).toMatchObject({ count: 4, ids: expect.arrayContaining([expect.stringMatching(/^[0-9a-f-]{36}$/)]) });
    const created = await runCli(["--project", project, "--json", "index", "create", "--wait", "--timeout", "1"], { env: { SEMSEARCH_FAILPOINT: "worker:read" } });
    expect(created.exitCode, created.stderr).toBe(5);
    expect(JSON.parse(created.stdout).id).toMatch(/^idx_/);
  });
});
