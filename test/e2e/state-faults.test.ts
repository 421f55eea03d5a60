/**
 * Damaged project state beside existing data, through the built CLI: each of the project's small
 * state files deleted, emptied, cut short, filled with garbage or made a directory, and each kind of
 * LanceDB table damaged (its versions folder removed, a data file removed, its manifest cut short,
 * the whole table removed), on a project of 10 objects and an index. A file that nothing can rebuild
 * (the catalog, a journal) and a damaged table are refused with exit 6 naming them, and nothing is
 * written; derived files (progress, seq) are rebuilt. Every object and the index's tables survive:
 * they are counted after the damage is undone. And no table is dropped unless a journal names it.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cliJson, runCli, tempProject, type CliResult } from "../helpers/cli.js";

type StoreModule = typeof import("../../src/engine/store/lance-store.js");

async function openStore(project: string) {
  const { LanceStore } = (await import(new URL("../../dist/engine/store/lance-store.js", import.meta.url).href)) as StoreModule;
  return LanceStore.open(path.join(project, "data"));
}

const COUNT = 10;
const objects = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => JSON.stringify({ id: `${prefix}${i}`, title: `Title ${i}`, body: `The meadow number ${i} lies by the river.` })).join("\n");

/** Waits until the project's background worker has exited (it exits on its own once idle). */
async function workerGone(project: string): Promise<void> {
  for (;;) {
    const status = await runCli(["--project", project, "--json", "worker", "status"]);
    if (status.exitCode === 0 && JSON.parse(status.stdout).running === false) return;
    await new Promise((resolve) => setTimeout(resolve, 250)); // each look is a CLI process: look less often than it takes
  }
}

/** Every file under `dir` with its size and modification time: what a command wrote shows up here. */
function tree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => {
      const stat = statSync(path.join(dir, name));
      return stat.isDirectory() ? `${name}/` : `${name} ${stat.size} ${stat.mtimeMs}`;
    })
    .sort();
}

let base: { dir: string; index: string };

/** A copy of the base project (10 objects, one index with highlights, all READY). */
function copy(): string {
  const dir = tempProject();
  cpSync(base.dir, dir, { recursive: true });
  return dir;
}

/** Every object and the index's rows (and segments, for the base index) are there, and search finds them. */
async function survived(project: string, index = base.index): Promise<void> {
  const store = await openStore(project);
  try {
    expect((await store.rowIds("objects")).length).toBe(COUNT);
    expect((await store.rowIds(`index_${index}`)).length).toBe(COUNT);
    if (index === base.index) expect(await store.countRows(`segments_${index}`)).toBeGreaterThanOrEqual(COUNT);
  } finally {
    store.close();
  }
  const { status } = await cliJson(project, ["index", "status", index]);
  expect(status).toEqual({ UPLOADED: 0, PROCESSING: 0, READY: COUNT, ERROR: 0 });
  const { results } = await cliJson(project, ["search", index, "meadow river", "--limit", "20"]);
  expect(results).toHaveLength(COUNT);
}

/** A command refused with exit 6, its error naming `named`. */
function refused(result: CliResult, named: string, code?: string): void {
  expect(result.exitCode, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(6);
  const [error] = JSON.parse(result.stderr).errors;
  expect(error.message).toContain(named);
  if (code) expect(error.code).toBe(code);
  expect(result.stdout).toBe("");
}

/** The commands tried on a damaged project: readers and every kind of writer. */
const COMMANDS = (index: string): { args: string[]; input?: string }[] => [
  { args: ["objects", "list"] },
  { args: ["index", "list"] },
  { args: ["search", index, "meadow"] },
  { args: ["objects", "get", "a1"] },
  { args: ["objects", "add", "-"], input: objects("new", 3) },
  { args: ["objects", "delete", "a1"] },
  { args: ["index", "create", "--searchable", "title"] },
  { args: ["index", "delete", index] },
];

const run = (project: string, command: { args: string[]; input?: string }) =>
  runCli(["--project", project, "--json", ...command.args], { input: command.input ?? "" });

type Damage = "deleted" | "empty" | "cut short" | "garbage" | "a directory";
/**
 * One damage of each way it is read: missing, unparseable (empty, cut short and garbage fail the same
 * parse; the unit tests of project.ts and journals.ts take each), and a directory. The e2e cases run
 * every command of a kind against these, to keep the file's time in the suite's budget.
 */
const DISTINCT: Damage[] = ["deleted", "garbage", "a directory"];
/** Every other command of COMMANDS: readers and writers of each kind (list, search, add, index create). */
const alternate = <T>(_: T, i: number) => i % 2 === 0;

/** Damages a file; returns what undoes it. */
function damage(file: string, how: Damage): () => void {
  const saved = existsSync(file) ? readFileSync(file) : null;
  rmSync(file, { force: true, recursive: true });
  if (how === "empty") writeFileSync(file, "");
  if (how === "cut short") writeFileSync(file, (saved ?? Buffer.from('{"pid": 1, "x": [1, 2]}')).subarray(0, Math.max(1, Math.floor((saved?.length ?? 20) / 2))));
  if (how === "garbage") writeFileSync(file, "\u0000garbage \u00ff{[");
  if (how === "a directory") mkdirSync(file);
  return () => {
    rmSync(file, { force: true, recursive: true });
    if (saved !== null) writeFileSync(file, saved);
  };
}

beforeAll(async () => {
  const dir = tempProject();
  await cliJson(dir, ["objects", "add", "-"], { input: objects("a", COUNT) });
  const { id } = await cliJson(dir, ["index", "create", "--searchable", "title,body", "--highlights"]);
  await cliJson(dir, ["index", "status", id, "--wait"]);
  await workerGone(dir);
  base = { dir, index: id };
}, 120_000);

describe("catalog.json damaged beside existing objects and an index", () => {
  it.each(DISTINCT)("%s: every command exits 6 naming it, nothing is written or dropped, and all is there once it is restored", async (how) => {
    const project = copy();
    const catalog = path.join(project, "catalog.json");
    const restore = damage(catalog, how);
    const before = tree(project);
    const commands = COMMANDS(base.index);
    for (const command of commands) refused(await run(project, command), catalog, how === "a directory" ? "EISDIR" : "CORRUPT_PROJECT");
    expect(tree(project)).toEqual(before); // no catalog written, no table created, dropped or changed, no worker started
    if (how === "deleted") {
      const result = await run(project, { args: ["objects", "list"] });
      expect(JSON.parse(result.stderr).errors[0].hint).toContain('{"version":1,"indexes":[]}');
    }
    restore();
    await survived(project);
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

  it("a new project, with nothing in it yet, still starts normally", async () => {
    const project = tempProject();
    await cliJson(project, ["objects", "list"]);
    mkdirSync(path.join(project, "data"), { recursive: true }); // an init killed before it wrote the catalog
    mkdirSync(path.join(project, "progress"), { recursive: true });
    await cliJson(project, ["objects", "add", "-"], { input: objects("f", 2) });
    expect((await cliJson(project, ["objects", "list"])).objects).toHaveLength(2);
  });
});

describe("no table is dropped unless a journal names it", () => {
  it("the catalog written anew (as the hint says, without a backup): the old index's tables stay through index create, index delete and the worker", async () => {
    const project = copy();
    const tables = [`index_${base.index}`, `segments_${base.index}`];
    writeFileSync(path.join(project, "catalog.json"), '{"version":1,"indexes":[]}');
    const { id } = await cliJson(project, ["index", "create", "--searchable", "body"]);
    await cliJson(project, ["objects", "add", "-"], { input: objects("b", 2) });
    await cliJson(project, ["index", "status", id, "--wait"]);
    await workerGone(project); // it compacts the object table when idle
    await cliJson(project, ["index", "delete", id]);
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

  it("an index create killed once the catalog lists the index keeps its tables; a delete killed at each step is completed", async () => {
    const project = copy();
    const crash = (point: string, args: string[]) => runCli(["--project", project, ...args], { env: { SEMSEARCH_FAILPOINT: point } });
    expect((await crash("index-create:catalog", ["index", "create", "--searchable", "body", "--name", "late"])).signal).toBe("SIGKILL");
    expect(existsSync(path.join(project, "index.journal"))).toBe(true);
    const { indexes } = await cliJson(project, ["index", "list"]);
    const late = indexes.find((index: { name?: string }) => index.name === "late");
    expect(late).toBeDefined();
    expect(existsSync(path.join(project, "index.journal"))).toBe(false);
    await cliJson(project, ["index", "status", late.id, "--wait"]);
    expect((await cliJson(project, ["search", late.id, "meadow", "--limit", "20"])).results).toHaveLength(COUNT);
    for (const point of ["index-delete:journal", "index-delete:catalog", "index-delete:tables"]) {
      const { id } = await cliJson(project, ["index", "create", "--searchable", "title"]);
      await workerGone(project); // (a writer that runs between the delete's two locked steps would finish it for it)
      expect((await crash(point, ["index", "delete", id])).signal, point).toBe("SIGKILL");
      const after = await cliJson(project, ["index", "list"]);
      expect(after.indexes.map((index: { id: string }) => index.id), point).not.toContain(id);
      const store = await openStore(project);
      try {
        expect((await store.tableNames()).filter((name) => name.endsWith(id)), point).toEqual([]);
      } finally {
        store.close();
      }
      expect(existsSync(path.join(project, "progress", `${id}.json`)), point).toBe(false);
    }
    await workerGone(project);
    await survived(project);
    await survived(project, late.id);
  });
});

describe("the other state files damaged beside existing data", () => {
  /** Derived files are rebuilt (exit 0); a directory in their place is exit 6 naming it. */
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
      for (const command of COMMANDS(base.index).slice(2, 5)) refused(await run(project, command), file, "EISDIR");
      expect(tree(path.join(project, "data"))).toEqual(before);
      restore();
    } else {
      await cliJson(project, ["objects", "add", "-"], { input: objects("n", 2) });
      for (const id of ["n0", "n1"]) await cliJson(project, ["objects", "delete", id]);
    }
    await cliJson(project, ["index", "status", base.index, "--wait"]);
    await workerGone(project);
    await survived(project);
  });

  it.each([
    ...(["cut short", "a directory"] as const).map((how) => ["add.journal", how] as const),
    ...(["garbage", "a directory"] as const).map((how) => ["index.journal", how] as const),
    ["index.journal", "naming the object table"] as const,
    ["delete.journal", "a directory"] as const,
  ])("%s %s: exit 6 naming it, nothing written or dropped; all is there once it is removed", async (name, how) => {
    const project = copy();
    const file = path.join(project, name);
    if (how === "naming the object table") writeFileSync(file, JSON.stringify({ pid: 99_999_999, op: "create", id: "idx_zz", tables: ["objects"] }));
    else damage(file, how);
    const before = tree(path.join(project, "data"));
    for (const command of COMMANDS(base.index).filter(alternate)) refused(await run(project, command), file, how === "a directory" ? "EISDIR" : "CORRUPT_PROJECT");
    expect(tree(path.join(project, "data"))).toEqual(before);
    if (how !== "a directory") expect(JSON.parse((await run(project, { args: ["index", "list"] })).stderr).errors[0].hint).toContain(`Remove ${file}`);
    rmSync(file, { recursive: true });
    await survived(project);
  });

  it.each(["garbage", "empty"] as const)("delete.journal %s: the delete is reconciled from the store (exit 0) and nothing else is lost", async (how) => {
    const project = copy();
    damage(path.join(project, "delete.journal"), how);
    await cliJson(project, ["objects", "list"]);
    expect(existsSync(path.join(project, "delete.journal"))).toBe(false);
    await survived(project);
  });

  it("worker.json garbage: it only says what the worker does, so work goes on", async () => {
    const project = copy();
    damage(path.join(project, "worker.json"), "garbage");
    await cliJson(project, ["objects", "add", "-"], { input: objects("w", 2) });
    await cliJson(project, ["index", "status", base.index, "--wait"]);
    for (const id of ["w0", "w1"]) await cliJson(project, ["objects", "delete", id]);
    await cliJson(project, ["index", "status", base.index, "--wait"]);
    await workerGone(project);
    await survived(project);
  });

  it("worker.json a directory: waiting on the worker exits 6 naming it; all is there once it is removed", async () => {
    const project = copy();
    const file = path.join(project, "worker.json");
    damage(file, "a directory");
    await cliJson(project, ["objects", "add", "-"], { input: objects("w", 2) });
    refused(await run(project, { args: ["index", "status", base.index, "--wait", "--timeout", "60"] }), file, "EISDIR");
    rmSync(file, { recursive: true });
    for (const id of ["w0", "w1"]) await cliJson(project, ["objects", "delete", id]);
    await cliJson(project, ["index", "status", base.index, "--wait"]);
    await workerGone(project);
    await survived(project);
  });
});

describe("a damaged LanceDB table", () => {
  const versions = (table: string) => (project: string) => rmSync(path.join(project, "data", `${table}.lance`, "_versions"), { recursive: true });
  const dataFile = (table: string) => (project: string) => {
    const folder = path.join(project, "data", `${table}.lance`, "data");
    rmSync(path.join(folder, readdirSync(folder)[0] as string));
  };
  const manifest = (table: string) => (project: string) => {
    const folder = path.join(project, "data", `${table}.lance`, "_versions");
    // (manifest names count down: the latest version's sorts first)
    const latest = path.join(folder, readdirSync(folder).filter((name) => name.endsWith(".manifest")).sort()[0] as string);
    truncateSync(latest, Math.floor(statSync(latest).size / 2));
  };
  const whole = (table: string) => (project: string) => rmSync(path.join(project, "data", `${table}.lance`), { recursive: true });
  const indexFiles = (table: string) => (project: string) => {
    const folder = path.join(project, "data", `${table}.lance`, "_indices");
    for (const name of readdirSync(folder)) rmSync(path.join(folder, name), { recursive: true });
  };

  it.each([
    ["its versions folder removed", versions],
    ["a data file removed", dataFile],
    ["its latest manifest cut short", manifest],
    ["removed whole", whole],
  ] as const)("the object table, %s: exit 6 naming the table and the project, never rewritten; all is there once it is restored", async (_what, harm) => {
    const project = copy();
    harm("objects")(project);
    const before = tree(project);
    for (const command of COMMANDS(base.index).filter(alternate)) {
      const result = await run(project, command);
      refused(result, path.join(project, "data", "objects.lance"), "CORRUPT_TABLE");
      expect(JSON.parse(result.stderr).errors[0].message).toContain(`The project ${project} is damaged`);
    }
    expect(tree(project)).toEqual(before);
    rmSync(path.join(project, "data", "objects.lance"), { recursive: true, force: true });
    cpSync(path.join(base.dir, "data", "objects.lance"), path.join(project, "data", "objects.lance"), { recursive: true });
    await survived(project);
  });

  it.each([
    ["index", "its versions folder removed", versions],
    ["index", "a data file removed", dataFile],
    ["index", "its latest manifest cut short", manifest],
    ["index", "removed whole", whole],
    ["index", "its index files removed", indexFiles],
    ["segments", "its versions folder removed", versions],
  ] as const)("the %s table, %s: search exits 6 naming it, nothing is dropped or rewritten; all is there once it is restored", async (kind, _what, harm) => {
    const project = copy();
    const table = `${kind}_${base.index}`;
    harm(table)(project);
    const before = tree(project);
    const searched = await run(project, { args: ["search", base.index, "meadow", ...(kind === "segments" ? ["--result-fields", "highlights"] : [])] });
    refused(searched, path.join(project, "data", `${table}.lance`), "CORRUPT_TABLE");
    expect(JSON.parse(searched.stderr).errors[0].hint).toContain(`semsearch index delete ${base.index}`);
    expect((await cliJson(project, ["objects", "list"])).objects).toHaveLength(COUNT);
    expect(tree(project)).toEqual(before);
    rmSync(path.join(project, "data", `${table}.lance`), { recursive: true, force: true });
    cpSync(path.join(base.dir, "data", `${table}.lance`), path.join(project, "data", `${table}.lance`), { recursive: true });
    await survived(project);
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

  it("the whole database (data/) removed: exit 6 naming the catalog's tables rather than an empty project; all is there once it is restored", async () => {
    const project = copy();
    rmSync(path.join(project, "data"), { recursive: true });
    for (const command of [{ args: ["objects", "list"] }, { args: ["objects", "add", "-"], input: objects("new", 1) }, { args: ["search", base.index, "meadow"] }]) {
      refused(await run(project, command), path.join(project, "data", `index_${base.index}.lance`), "CORRUPT_TABLE");
    }
    rmSync(path.join(project, "data"), { recursive: true });
    cpSync(path.join(base.dir, "data"), path.join(project, "data"), { recursive: true });
    await survived(project);
  });

  it("the way out the hint gives for a damaged index table: deleting the index drops it, and the objects stay", async () => {
    const project = copy();
    versions(`index_${base.index}`)(project);
    await cliJson(project, ["index", "delete", base.index]);
    expect(existsSync(path.join(project, "data", `index_${base.index}.lance`))).toBe(false);
    const { id } = await cliJson(project, ["index", "create", "--searchable", "title,body", "--highlights"]);
    await cliJson(project, ["index", "status", id, "--wait"]);
    await workerGone(project);
    await survived(project, id);
  });
});
