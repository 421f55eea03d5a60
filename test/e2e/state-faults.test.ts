/**
 * Damaged project state through the built CLI, on a copy of a project of 10 objects and an index:
 * what the CLI process adds to the engine's refusals, and what only a killed process can show.
 * - A damaged catalog beside existing data: exit 6, the error as one JSON document on stderr with
 *   --json and as `error:` and hint lines for people, nothing on stdout, nothing written by the
 *   commands (no worker started); all is there once it is restored (exit 0, an empty stderr).
 * - A lost catalog is found from a subdirectory rather than a new project started there.
 * - Commands killed (SIGKILL) at fail points: the next command completes or keeps their work; and a
 *   delete of objects killed half-way, then an index table damaged (exit 6, CORRUPT_TABLE).
 * Every damage of every state file and kind of table, against the engine calls of every command:
 * unit/engine/state-faults-engine.test.ts.
 */
import { cpSync, existsSync, mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cliJson, runCli, tempProject, type CliResult } from "../helpers/cli.js";
import { addObjects, indexBody, ok, search, waitBuilt, workerGone } from "../helpers/in-process.js";
import { buildBase, COUNT, copyProject, damage, objects, openStore, survived, tree, versions } from "../helpers/state-faults.js";

let base: { dir: string; index: string };

/** A copy of the base project (10 objects, one index with highlights, all READY). */
const copy = () => copyProject(base.dir, tempProject());

/** A command refused with exit 6, its --json error naming `named`, and nothing on stdout; the error. */
function refused(result: CliResult, named: string, code?: string): { code: string; message: string; hint?: string } {
  expect(result.exitCode, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(6);
  const [error] = JSON.parse(result.stderr).errors;
  expect(error.message).toContain(named);
  if (code) expect(error.code).toBe(code);
  expect(result.stdout).toBe("");
  return error;
}

const run = (project: string, command: { args: string[]; input?: string }) =>
  runCli(["--project", project, "--json", ...command.args], { input: command.input ?? "" });

beforeAll(async () => {
  // (in process: the CLI's exit 0 is seen once the catalog is restored below)
  const dir = tempProject();
  base = await buildBase(dir);
}, 120_000);

describe("catalog.json damaged beside existing objects and an index", () => {
  it("garbage: a reader, a search and a writer exit 6 naming it, as JSON with --json and as text without; nothing is written or dropped; all is there once it is restored", async () => {
    const project = copy();
    const catalog = path.join(project, "catalog.json");
    const restore = damage(catalog, "garbage");
    const before = tree(project);
    const commands = [{ args: ["objects", "list"] }, { args: ["search", base.index, "meadow"] }, { args: ["objects", "add", "-"], input: objects("new", 3) }];
    const errors = [];
    for (const command of commands) errors.push(refused(await run(project, command), catalog, "CORRUPT_PROJECT"));
    // For people: the same message and hint on stderr, no JSON, nothing on stdout.
    const text = await runCli(["--project", project, "objects", "add", "-"], { input: objects("new", 3) });
    expect(text.exitCode, text.stderr).toBe(6);
    expect(text.stdout).toBe("");
    expect(errors[2]?.hint).toBeTruthy();
    expect(text.stderr).toBe(`error: ${errors[2]?.message}\n${errors[2]?.hint}\n`);
    expect(tree(project)).toEqual(before); // no catalog written, no table created, dropped or changed, no worker started
    restore();
    // (through the CLI: exit 0 with an empty stderr, and the search's results)
    expect((await cliJson(project, ["index", "status", base.index])).status).toEqual({ UPLOADED: 0, PROCESSING: 0, READY: COUNT, ERROR: 0 });
    expect((await cliJson(project, ["search", base.index, "meadow river", "--limit", "20"])).results).toHaveLength(COUNT);
    await survived(project, base.index, true);
  });

  it("a lost catalog is found from a subdirectory too, rather than a new project started there", async () => {
    const parent = path.dirname(copy());
    const project = path.join(parent, ".semsearch");
    cpSync(base.dir, project, { recursive: true });
    rmSync(path.join(project, "catalog.json"));
    mkdirSync(path.join(parent, "sub"));
    const result = await runCli(["--json", "objects", "add", "-"], { cwd: path.join(parent, "sub"), input: objects("n", 1) });
    refused(result, path.join(project, "catalog.json"), "CORRUPT_PROJECT");
    expect(existsSync(path.join(parent, "sub", ".semsearch"))).toBe(false);
  });
});

describe("commands killed at a fail point", () => {
  // (the commands after each kill run in process: the next command's engine completes the work)
  it("an index create killed once the catalog lists the index keeps its tables; a delete killed at each step is completed", async () => {
    const project = copy();
    const crash = (point: string, args: string[]) => runCli(["--project", project, ...args], { env: { SEMSEARCH_FAILPOINT: point } });
    expect((await crash("index-create:catalog", ["index", "create", "--searchable", "body", "--name", "late"])).signal).toBe("SIGKILL");
    expect(existsSync(path.join(project, "index.journal"))).toBe(true);
    const indexes = await ok(project, (engine) => engine.listIndexes());
    const late = indexes.find((index) => index.name === "late");
    expect(late).toBeDefined();
    const lateId = late?.id as string;
    expect(existsSync(path.join(project, "index.journal"))).toBe(false);
    await ok(project, (engine) => waitBuilt(engine, lateId));
    expect((await ok(project, (engine) => search(engine, lateId, "meadow", { limit: 20 }))).hits).toHaveLength(COUNT);
    // An index to delete per fail point, each built (by one worker) before its delete.
    const points = ["index-delete:journal", "index-delete:catalog", "index-delete:tables"];
    const ids = new Map<string, string>();
    for (const point of points) ids.set(point, (await ok(project, (engine) => engine.createIndex(indexBody(["title"])))).id);
    for (const point of points) {
      const id = ids.get(point) as string;
      await workerGone(project); // (a writer that runs between the delete's two locked steps would finish it for it)
      expect((await crash(point, ["index", "delete", id])).signal, point).toBe("SIGKILL");
      const after = await ok(project, (engine) => engine.listIndexes());
      expect(after.map((index) => index.id), point).not.toContain(id);
      const store = await openStore(project);
      try {
        expect((await store.tableNames()).filter((name) => name.endsWith(id)), point).toEqual([]);
      } finally {
        store.close();
      }
      expect(existsSync(path.join(project, "progress", `${id}.json`)), point).toBe(false);
    }
    await workerGone(project);
    await survived(project, base.index, true);
    await survived(project, lateId, false);
  });

  it("a delete of objects killed half-way, then an index table damaged: exit 6 until the index is deleted as the hint says, which finishes the delete", async () => {
    const project = copy();
    const killed = await runCli(["--project", project, "objects", "delete", "a3"], { env: { SEMSEARCH_FAILPOINT: "delete:objects" } });
    expect(killed.signal).toBe("SIGKILL");
    versions(`index_${base.index}`)(project);
    refused(await run(project, { args: ["objects", "list"] }), `index_${base.index}`, "CORRUPT_TABLE");
    await cliJson(project, ["index", "delete", base.index]);
    expect(existsSync(path.join(project, "delete.journal"))).toBe(false);
    const ids = (await cliJson(project, ["objects", "list"])).objects.map((object: { id: string }) => object.id);
    expect(ids.sort()).toEqual(Array.from({ length: COUNT }, (_, i) => `a${i}`).filter((id) => id !== "a3").sort());
  });
});
