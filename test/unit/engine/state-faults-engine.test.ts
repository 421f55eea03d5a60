/**
 * Damaged project state beside existing data, in process against the built engine: the calls each
 * CLI command makes, each through an engine of its own (as each command is a process of its own),
 * on a copy of a project of 10 objects and an index with highlights. Each of the project's small
 * state files is deleted, emptied, cut short, filled with garbage or made a directory, and each kind
 * of LanceDB table damaged (its versions folder removed, a data file removed, its manifest cut
 * short, the whole table removed). A file that nothing can rebuild (the catalog, a journal) and a
 * damaged table are refused as environment errors (exit 6) naming them, and nothing is written;
 * derived files (progress, seq) are rebuilt. Every object and the index's tables survive: they are
 * counted after the damage is undone. And no table is dropped unless a journal names it.
 *
 * The background worker is the real one (the built engine starts it as a process). Through the
 * built CLI (exit codes, the --json error body and the message on stderr, fail points that kill a
 * command, a project found from a subdirectory): e2e/state-faults.test.ts.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { addObjects, failure, indexBody, ok, search, waitBuilt, workerGone, type Engine, type Operation, type SemsearchError } from "../../helpers/in-process.js";
import { buildBase, COUNT, copyProject, damage, dataFile, DISTINCT, indexFiles, manifest, objects, openStore, restoreTable, survived as survivedAt, tree, versions, whole } from "../../helpers/state-faults.js";
import { tempDir } from "../../helpers/temp.js";

/** The commands tried on a damaged project: readers and every kind of writer. */
const OPERATIONS = (index: string): Operation[] => [
  { command: "objects list", run: (engine) => engine.listObjects(0, 100) },
  { command: "index list", run: (engine) => engine.listIndexes() },
  { command: `search ${index} meadow`, run: (engine) => search(engine, index, "meadow") },
  { command: "objects get a1", run: (engine) => engine.getObject("a1") },
  { command: "objects add -", run: (engine) => addObjects(engine, objects("new", 3)) },
  { command: "objects delete a1", run: (engine) => engine.deleteObject("a1") },
  { command: "index create --searchable title", run: (engine) => engine.createIndex(indexBody(["title"]), { onModelDownload: () => {} }) },
  { command: `index delete ${index}`, run: (engine) => engine.deleteIndex(index) },
];
/** Every other operation: readers and writers of each kind (list, search, add, index create). */
const alternate = <T>(_: T, i: number) => i % 2 === 0;

/** The error `operation` is refused with: an environment error (exit 6) naming `named`, with `code`. */
async function refused(project: string, operation: Operation, named: string, code: string): Promise<SemsearchError> {
  const error = await failure(project, operation);
  expect({ command: operation.command, exitCode: error.exitCode, code: error.code }).toEqual({ command: operation.command, exitCode: 6, code });
  expect(error.message).toContain(named);
  return error;
}

let base: { dir: string; index: string };

/** A copy of the base project (10 objects, one index with highlights, all READY). */
const copy = () => copyProject(base.dir, path.join(tempDir("semsearch-state-faults-"), "project"));

/** Every object and the index's rows (and segments, for the base index) are there, and search finds them. */
const survived = (project: string, index = base.index) => survivedAt(project, index, index === base.index);

beforeAll(async () => {
  const dir = path.join(tempDir("semsearch-state-faults-"), "project");
  base = await buildBase(dir);
}, 120_000);

describe("catalog.json damaged beside existing objects and an index", () => {
  it.each(DISTINCT)("%s: every command is refused (exit 6) naming it, nothing is written or dropped, and all is there once it is restored", async (how) => {
    const project = copy();
    const catalog = path.join(project, "catalog.json");
    const restore = damage(catalog, how);
    const before = tree(project);
    const errors = [];
    for (const operation of OPERATIONS(base.index)) errors.push(await refused(project, operation, catalog, how === "a directory" ? "EISDIR" : "CORRUPT_PROJECT"));
    expect(tree(project)).toEqual(before); // no catalog written, no table created, dropped or changed, no worker started
    if (how === "deleted") expect(errors[0]?.hint).toContain('{"version":1,"indexes":[]}');
    restore();
    await survived(project);
  });

  it("a new project, with nothing in it yet, still starts normally", async () => {
    const project = path.join(tempDir("semsearch-state-faults-"), "project");
    await ok(project, (engine) => engine.listObjects(0, 100));
    mkdirSync(path.join(project, "data"), { recursive: true }); // an init killed before it wrote the catalog
    mkdirSync(path.join(project, "progress"), { recursive: true });
    await ok(project, (engine) => addObjects(engine, objects("f", 2)));
    expect(await ok(project, (engine) => engine.listObjects(0, 100))).toHaveLength(2);
  });
});

describe("no table is dropped unless a journal names it", () => {
  it("the catalog written anew (as the hint says, without a backup): the old index's tables stay through index create, index delete and the worker", async () => {
    const project = copy();
    const tables = [`index_${base.index}`, `segments_${base.index}`];
    writeFileSync(path.join(project, "catalog.json"), '{"version":1,"indexes":[]}');
    const { id } = await ok(project, (engine) => engine.createIndex(indexBody(["body"])));
    await ok(project, (engine) => addObjects(engine, objects("b", 2)));
    await ok(project, (engine) => waitBuilt(engine, id));
    await workerGone(project); // it compacts the object table when idle
    await ok(project, (engine) => engine.deleteIndex(id));
    const store = await openStore(project);
    try {
      const names = await store.tableNames();
      for (const table of tables) expect(names).toContain(table);
      expect(names).not.toContain(`index_${id}`);
      expect((await store.rowIds(`index_${base.index}`)).length).toBe(COUNT);
    } finally {
      store.close();
    }
  });
});

describe("the other state files damaged beside existing data", () => {
  /** Derived files are rebuilt; a directory in their place is refused (exit 6) naming it. */
  // (a deleted seq or progress file: crash-recovery.test.ts)
  it.each([
    ...(["garbage", "a directory"] as const).map((how) => ["seq", how] as const),
    ...(["garbage", "a directory"] as const).map((how) => ["progress", how] as const),
  ])("%s %s", async (name, how) => {
    const project = copy();
    const file = name === "seq" ? path.join(project, "seq") : path.join(project, "progress", `${base.index}.json`);
    const restore = damage(file, how);
    if (how === "a directory") {
      const before = tree(path.join(project, "data"));
      for (const operation of OPERATIONS(base.index).slice(2, 5)) await refused(project, operation, file, "EISDIR");
      expect(tree(path.join(project, "data"))).toEqual(before);
      restore();
    } else {
      await ok(project, (engine) => addObjects(engine, objects("n", 2)));
      for (const id of ["n0", "n1"]) await ok(project, (engine) => engine.deleteObject(id));
    }
    await ok(project, (engine) => waitBuilt(engine, base.index));
    await workerGone(project);
    await survived(project);
  });

  it.each([
    ...(["cut short", "a directory"] as const).map((how) => ["add.journal", how] as const),
    ...(["garbage", "a directory"] as const).map((how) => ["index.journal", how] as const),
    ["index.journal", "naming the object table"] as const,
    ["delete.journal", "a directory"] as const,
  ])("%s %s: refused (exit 6) naming it, nothing written or dropped; all is there once it is removed", async (name, how) => {
    const project = copy();
    const file = path.join(project, name);
    if (how === "naming the object table") writeFileSync(file, JSON.stringify({ pid: 99_999_999, op: "create", id: "idx_zz", tables: ["objects"] }));
    else damage(file, how);
    const before = tree(path.join(project, "data"));
    const code = how === "a directory" ? "EISDIR" : "CORRUPT_PROJECT";
    for (const operation of OPERATIONS(base.index).filter(alternate)) await refused(project, operation, file, code);
    expect(tree(path.join(project, "data"))).toEqual(before);
    if (how !== "a directory") expect((await refused(project, OPERATIONS(base.index)[1] as Operation, file, code)).hint).toContain(`Remove ${file}`);
    rmSync(file, { recursive: true });
    await survived(project);
  });

  it.each(["garbage", "empty"] as const)("delete.journal %s: the delete is reconciled from the store (success) and nothing else is lost", async (how) => {
    const project = copy();
    damage(path.join(project, "delete.journal"), how);
    await ok(project, (engine) => engine.listObjects(0, 100));
    expect(existsSync(path.join(project, "delete.journal"))).toBe(false);
    await survived(project);
  });

  it("worker.json garbage: it only says what the worker does, so work goes on", async () => {
    const project = copy();
    damage(path.join(project, "worker.json"), "garbage");
    await ok(project, (engine) => addObjects(engine, objects("w", 2)));
    await ok(project, (engine) => waitBuilt(engine, base.index));
    for (const id of ["w0", "w1"]) await ok(project, (engine) => engine.deleteObject(id));
    await ok(project, (engine) => waitBuilt(engine, base.index));
    await workerGone(project);
    await survived(project);
  });

  it("worker.json a directory: waiting on the worker is refused (exit 6) naming it; all is there once it is removed", async () => {
    const project = copy();
    const file = path.join(project, "worker.json");
    damage(file, "a directory");
    await ok(project, (engine) => addObjects(engine, objects("w", 2)));
    await refused(project, { command: `index status ${base.index} --wait --timeout 60`, run: (engine) => waitBuilt(engine, base.index, 60_000) }, file, "EISDIR");
    rmSync(file, { recursive: true });
    for (const id of ["w0", "w1"]) await ok(project, (engine) => engine.deleteObject(id));
    await ok(project, (engine) => waitBuilt(engine, base.index));
    await workerGone(project);
    await survived(project);
  });
});

describe("a damaged LanceDB table", () => {
  it.each([
    ["its versions folder removed", versions],
    ["a data file removed", dataFile],
    ["its latest manifest cut short", manifest],
    ["removed whole", whole],
  ] as const)("the object table, %s: refused (exit 6) naming the table and the project, never rewritten; all is there once it is restored", async (_what, harm) => {
    const project = copy();
    harm("objects")(project);
    const before = tree(project);
    for (const operation of OPERATIONS(base.index).filter(alternate)) {
      const error = await refused(project, operation, path.join(project, "data", "objects.lance"), "CORRUPT_TABLE");
      expect(error.message).toContain(`The project ${project} is damaged`);
    }
    expect(tree(project)).toEqual(before);
    restoreTable(project, base.dir, "objects");
    await survived(project);
  });

  it.each([
    ["index", "its versions folder removed", versions],
    ["index", "a data file removed", dataFile],
    ["index", "its latest manifest cut short", manifest],
    ["index", "removed whole", whole],
    ["index", "its index files removed", indexFiles],
    ["segments", "its versions folder removed", versions],
  ] as const)("the %s table, %s: search is refused (exit 6) naming it, nothing is dropped or rewritten; all is there once it is restored", async (kind, _what, harm) => {
    const project = copy();
    const table = `${kind}_${base.index}`;
    harm(table)(project);
    const before = tree(project);
    const searching = { command: `search ${base.index} meadow`, run: (engine: Engine) => search(engine, base.index, "meadow", kind === "segments" ? { resultFields: "highlights" } : {}) };
    const error = await refused(project, searching, path.join(project, "data", `${table}.lance`), "CORRUPT_TABLE");
    expect(error.hint).toContain(`semsearch index delete ${base.index}`);
    expect(await ok(project, (engine) => engine.listObjects(0, 100))).toHaveLength(COUNT);
    expect(tree(project)).toEqual(before);
    restoreTable(project, base.dir, table);
    await survived(project);
  });

  it("the whole database (data/) removed: refused (exit 6) naming the catalog's tables rather than an empty project; all is there once it is restored", async () => {
    const project = copy();
    rmSync(path.join(project, "data"), { recursive: true });
    const [listing, , searching, , adding] = OPERATIONS(base.index) as Operation[];
    for (const operation of [listing, adding, searching] as Operation[]) await refused(project, operation, path.join(project, "data", `index_${base.index}.lance`), "CORRUPT_TABLE");
    rmSync(path.join(project, "data"), { recursive: true });
    copyProject(path.join(base.dir, "data"), path.join(project, "data"));
    await survived(project);
  });

  it("the way out the hint gives for a damaged index table: deleting the index drops it, and the objects stay", async () => {
    const project = copy();
    versions(`index_${base.index}`)(project);
    await ok(project, (engine) => engine.deleteIndex(base.index));
    expect(existsSync(path.join(project, "data", `index_${base.index}.lance`))).toBe(false);
    const { id } = await ok(project, (engine) => engine.createIndex(indexBody(["title", "body"], true)));
    await ok(project, (engine) => waitBuilt(engine, id));
    await workerGone(project);
    await survived(project, id);
  });
});
