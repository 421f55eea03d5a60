/**
 * The damaged-state tests' project and damages, shared by e2e/state-faults.test.ts (through the
 * built CLI) and unit/engine/state-faults-engine.test.ts (the same damages, in process against the
 * built engine): the objects they add, a project's file tree, how a state file or a table is
 * damaged, and the check that all is there once the damage is undone.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { addObjects, indexBody, ok, search, waitBuilt, workerGone } from "./in-process.js";

type StoreModule = typeof import("../../src/engine/store/lance-store.js");

/** The built engine's LanceDB store on a project's database (what the CLI and its worker read). */
export async function openStore(project: string) {
  const { LanceStore } = (await import(new URL("../../dist/engine/store/lance-store.js", import.meta.url).href)) as StoreModule;
  return LanceStore.open(path.join(project, "data"));
}

/** Objects in the base project. */
export const COUNT = 10;

/** `count` objects as JSON Lines, ids `${prefix}0`…, each about a meadow by the river. */
export const objects = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => JSON.stringify({ id: `${prefix}${i}`, title: `Title ${i}`, body: `The meadow number ${i} lies by the river.` })).join("\n");

/** Every file under `dir` with its size and modification time: what a command wrote shows up here. */
export function tree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => {
      const stat = statSync(path.join(dir, name));
      return stat.isDirectory() ? `${name}/` : `${name} ${stat.size} ${stat.mtimeMs}`;
    })
    .sort();
}

/** A copy of the project `base` at `dir` (a path that does not exist yet); returns `dir`. */
export function copyProject(base: string, dir: string): string {
  cpSync(base, dir, { recursive: true });
  return dir;
}

export type Damage = "deleted" | "empty" | "cut short" | "garbage" | "a directory";

/**
 * One damage of each way a state file is read: missing, unparseable (empty, cut short and garbage
 * fail the same parse; the unit tests of project.ts and journals.ts take each), and a directory.
 */
export const DISTINCT: Damage[] = ["deleted", "garbage", "a directory"];

/** Damages a file; returns what undoes it. */
export function damage(file: string, how: Damage): () => void {
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

/** A damage of a LanceDB table of a project: `harm(table)(project)`. */
export type TableHarm = (table: string) => (project: string) => void;

/** Its versions folder removed. */
export const versions: TableHarm = (table) => (project) => rmSync(path.join(project, "data", `${table}.lance`, "_versions"), { recursive: true });

/** One of its data files removed. */
export const dataFile: TableHarm = (table) => (project) => {
  const folder = path.join(project, "data", `${table}.lance`, "data");
  rmSync(path.join(folder, readdirSync(folder)[0] as string));
};

/** Its latest manifest cut short. */
export const manifest: TableHarm = (table) => (project) => {
  const folder = path.join(project, "data", `${table}.lance`, "_versions");
  // (manifest names count down: the latest version's sorts first)
  const latest = path.join(folder, readdirSync(folder).filter((name) => name.endsWith(".manifest")).sort()[0] as string);
  truncateSync(latest, Math.floor(statSync(latest).size / 2));
};

/** The whole table removed. */
export const whole: TableHarm = (table) => (project) => rmSync(path.join(project, "data", `${table}.lance`), { recursive: true });

/** Its vector and full-text index files removed. */
export const indexFiles: TableHarm = (table) => (project) => {
  const folder = path.join(project, "data", `${table}.lance`, "_indices");
  for (const name of readdirSync(folder)) rmSync(path.join(folder, name), { recursive: true });
};

/** Puts the table `table` of `project` back as it is in `base`. */
export function restoreTable(project: string, base: string, table: string): void {
  rmSync(path.join(project, "data", `${table}.lance`), { recursive: true, force: true });
  cpSync(path.join(base, "data", `${table}.lance`), path.join(project, "data", `${table}.lance`), { recursive: true });
}

/**
 * Every object and the index's rows (and its highlight segments, with `segments`) are in the
 * database, the index's status says all are READY, and search finds them all (in process).
 */
export async function survived(project: string, index: string, segments: boolean): Promise<void> {
  const store = await openStore(project);
  try {
    expect((await store.rowIds("objects")).length).toBe(COUNT);
    expect((await store.rowIds(`index_${index}`)).length).toBe(COUNT);
    if (segments) expect(await store.countRows(`segments_${index}`)).toBeGreaterThanOrEqual(COUNT);
  } finally {
    store.close();
  }
  expect(await ok(project, (engine) => engine.indexStatus(index))).toEqual({ UPLOADED: 0, PROCESSING: 0, READY: COUNT, ERROR: 0 });
  expect((await ok(project, (engine) => search(engine, index, "meadow river", { limit: 20 }))).hits).toHaveLength(COUNT);
}

/** The base project the damage cases copy: COUNT objects and a built index of title and body with highlights, its worker gone. */
export async function buildBase(dir: string): Promise<{ dir: string; index: string }> {
  await ok(dir, (engine) => addObjects(engine, objects("a", COUNT)));
  const { id } = await ok(dir, (engine) => engine.createIndex(indexBody(["title", "body"], true)));
  await ok(dir, (engine) => waitBuilt(engine, id));
  await workerGone(dir);
  return { dir, index: id };
}
