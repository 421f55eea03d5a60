/**
 * How the store reports a failed LanceDB operation, on real LanceDB in a temporary directory: a
 * damaged or missing table is an EnvironmentError naming it (exit 6), never a bug (exit 1); a failure
 * with every table whole stays an InternalError; and the object table is never dropped.
 */
import { readdirSync, rmSync, truncateSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EnvironmentError, InternalError } from "../../../src/engine/errors.js";
import { LanceStore, type ObjectRow } from "../../../src/engine/store/lancedb.js";
import { tempDir } from "../../helpers/temp.js";

const row = (id: string, seq: number): ObjectRow => ({ id, body: JSON.stringify({ id }), seq, created_at: "t", updated_at: "t" });
const vector = (x: number) => Float32Array.from([x, 1, 0, 0]);

/** A store with 3 objects and an index table of their rows, which the catalog (`expectedTables`) lists once it is created. */
async function filled() {
  const dir = path.join(tempDir("semsearch-damage-"), "data");
  const expected: string[] = [];
  const store = await LanceStore.open(dir, { expectedTables: () => expected });
  await store.upsertObjects([row("a", 1), row("b", 2), row("c", 3)]);
  await store.createIndexTable("index_idx_a", 4);
  expected.push("index_idx_a");
  await store.upsertIndexRows("index_idx_a", ["a", "b", "c"].map((id, i) => ({ id, seq: i + 1, text: `text ${id}`, vector: vector(i) })));
  return { dir, store };
}

async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

describe("a damaged table is the environment's fault, naming the table", () => {
  const damages: [string, (table: string) => void][] = [
    ["its versions folder removed", (table) => rmSync(path.join(table, "_versions"), { recursive: true })],
    ["its data files removed", (table) => rmSync(path.join(table, "data"), { recursive: true })],
    [
      "every manifest cut short",
      (table) => {
        for (const name of readdirSync(path.join(table, "_versions")).filter((file) => file.endsWith(".manifest"))) {
          const file = path.join(table, "_versions", name);
          truncateSync(file, Math.floor(statSync(file).size / 2));
        }
      },
    ],
  ];

  it.each(damages)("the object table, %s", async (_what, harm) => {
    const { dir, store } = await filled();
    store.close();
    harm(path.join(dir, "objects.lance"));
    const fresh = await LanceStore.open(dir, { expectedTables: () => ["index_idx_a"] });
    const error = await failure(() => fresh.listObjects(0, 10));
    expect(error).toBeInstanceOf(EnvironmentError);
    expect((error as EnvironmentError).code).toBe("CORRUPT_TABLE");
    expect((error as EnvironmentError).message).toContain(path.join(dir, "objects.lance"));
    expect((error as EnvironmentError).message).not.toContain("index_idx_a");
    fresh.close();
  });

  it.each(damages)("an index table, %s", async (_what, harm) => {
    const { dir, store } = await filled();
    store.close();
    harm(path.join(dir, "index_idx_a.lance"));
    const fresh = await LanceStore.open(dir, { expectedTables: () => ["index_idx_a"] });
    const error = await failure(() => fresh.vectorSearch("index_idx_a", vector(0), 3));
    expect((error as EnvironmentError).code).toBe("CORRUPT_TABLE");
    expect((error as EnvironmentError).hint).toContain("semsearch index delete idx_a");
    expect(await fresh.countObjects()).toBe(3); // the object table reads on
    fresh.close();
  });

  // Reads pass (they need neither folder), but every write failed with LanceDB's "File exists (os
  // error 17)", which was a bug (exit 1 STORAGE_ERROR) for adds and a worker that kept failing.
  it("a table whose _transactions folder is a file fails writes naming it", async () => {
    const folder = "_transactions";
    const { dir, store } = await filled();
    store.close();
    for (const table of ["objects", "index_idx_a"]) {
      rmSync(path.join(dir, `${table}.lance`, folder), { recursive: true, force: true });
      writeFileSync(path.join(dir, `${table}.lance`, folder), "garbage");
    }
    const fresh = await LanceStore.open(dir, { expectedTables: () => ["index_idx_a"] });
    for (const write of [() => fresh.upsertObjects([row("d", 4)]), () => fresh.deleteIndexRows("index_idx_a", ["a"])]) {
      const error = await failure(write);
      expect(error).toBeInstanceOf(EnvironmentError);
      expect((error as EnvironmentError).code).toBe("CORRUPT_TABLE");
      expect((error as EnvironmentError).message).toContain(`${folder} is not a folder`);
    }
    expect(await fresh.countObjects()).toBe(3);
    fresh.close();
  });

  it("a table the catalog lists but the database lacks is missing; one the catalog no longer lists is not damage", async () => {
    const { dir, store } = await filled();
    store.close();
    rmSync(path.join(dir, "index_idx_a.lance"), { recursive: true });
    const listed = await LanceStore.open(dir, { expectedTables: () => ["index_idx_a"] });
    const error = await failure(() => listed.rowIds("index_idx_a"));
    expect((error as EnvironmentError).code).toBe("CORRUPT_TABLE");
    expect((error as EnvironmentError).message).toContain("index_idx_a is missing");
    listed.close();
    const deleted = await LanceStore.open(dir, { expectedTables: () => [] }); // deleted meanwhile (a search racing index delete)
    expect(await failure(() => deleted.rowIds("index_idx_a"))).toBeInstanceOf(InternalError);
    deleted.close();
  });

  it("the object table gone while an index table holds rows is missing, not an empty project, and no new one is created", async () => {
    const { dir, store } = await filled();
    store.close();
    rmSync(path.join(dir, "objects.lance"), { recursive: true });
    const fresh = await LanceStore.open(dir);
    for (const run of [() => fresh.countObjects(), () => fresh.appendObjects([row("d", 4)])]) {
      const error = await failure(run);
      expect((error as EnvironmentError).code).toBe("CORRUPT_TABLE");
      expect((error as EnvironmentError).message).toContain("objects is missing");
    }
    expect(await fresh.tableNames()).toEqual(["index_idx_a"]);
    fresh.close();
  });
});

describe("a failure with every table whole", () => {
  it("stays a bug (InternalError), not reported as damage", async () => {
    const { store } = await filled();
    const error = await failure(() => store.idsWhere("index_idx_a", "no_such_column = 1"));
    expect(error).toBeInstanceOf(InternalError);
    expect((error as InternalError).code).toBe("STORAGE_ERROR");
    store.close();
  });

  it("the object table is never dropped", async () => {
    const { store } = await filled();
    expect(await failure(() => store.dropTable("objects"))).toBeInstanceOf(InternalError);
    expect(await store.countObjects()).toBe(3);
    store.close();
  });
});
