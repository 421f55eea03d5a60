/**
 * How the store reports a failed LanceDB operation, on real LanceDB in a temporary directory: a
 * damaged or missing table is an EnvironmentError naming it (exit 6), never a bug (exit 1); a failure
 * with every table whole stays an InternalError; and the object table is never dropped.
 */
import { readdirSync, renameSync, rmSync, symlinkSync, truncateSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EnvironmentError, InternalError } from "../../../src/engine/errors.js";
import { LanceStore, type ObjectRow } from "../../../src/engine/store/lance-store.js";
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

/** The files of a table's versions folder that are version manifests. */
const manifests = (table: string) =>
  readdirSync(path.join(table, "_versions"))
    .filter((file) => file.endsWith(".manifest"))
    .map((file) => path.join(table, "_versions", file));

/**
 * A CORRUPT_TABLE error saying `what` of the table in `tableDir` failed, and nothing of what LanceDB
 * said (its error is the cause, which is not shown).
 */
function damageReported(error: unknown, tableDir: string, what: string): void {
  expect(error).toBeInstanceOf(EnvironmentError);
  const { code, message, cause } = error as EnvironmentError;
  expect(code).toBe("CORRUPT_TABLE");
  expect(message).toContain(`cannot be read: ${what}`);
  expect(message).toContain(tableDir);
  expect(cause).toBeInstanceOf(Error);
  expect(message).not.toContain((cause as Error).message.split("\n")[0]?.slice(0, 40));
}

describe("a damaged table is the environment's fault, naming the table", () => {
  const damages: [string, string, (table: string) => void][] = [
    ["its versions folder removed", "its latest version manifest is missing or unreadable", (table) => rmSync(path.join(table, "_versions"), { recursive: true })],
    ["its data files removed", "a data file is missing or unreadable", (table) => rmSync(path.join(table, "data"), { recursive: true })],
    [
      "every manifest cut short",
      "its latest version manifest is missing or unreadable",
      (table) => {
        for (const file of manifests(table)) truncateSync(file, Math.floor(statSync(file).size / 2));
      },
    ],
  ];

  it.each(damages)("the object table, %s", async (_what, said, harm) => {
    const { dir, store } = await filled();
    store.close();
    harm(path.join(dir, "objects.lance"));
    const fresh = await LanceStore.open(dir, { expectedTables: () => ["index_idx_a"] });
    const error = await failure(() => fresh.listObjects(0, 10));
    damageReported(error, path.join(dir, "objects.lance"), said);
    expect((error as EnvironmentError).message).not.toContain("index_idx_a");
    fresh.close();
  });

  it.each(damages)("an index table, %s", async (_what, said, harm) => {
    const { dir, store } = await filled();
    store.close();
    harm(path.join(dir, "index_idx_a.lance"));
    const fresh = await LanceStore.open(dir, { expectedTables: () => ["index_idx_a"] });
    const error = await failure(() => fresh.vectorSearch("index_idx_a", vector(0), 3));
    damageReported(error, path.join(dir, "index_idx_a.lance"), said);
    expect((error as EnvironmentError).hint).toContain("semsearch index delete idx_a");
    expect(await fresh.countObjects()).toBe(3); // the object table reads on
    fresh.close();
  });

  // LanceDB's message for a manifest it cannot read quotes its first bytes (as many as a link's own
  // size, the length of its target's name): a manifest replaced by a link to another file put that
  // file's text into the exit 6 message, which a server sends its clients.
  it("a manifest that is a link to another file: nothing of that file is in the message", async () => {
    const { dir, store } = await filled();
    store.close();
    const versions = path.join(dir, "objects.lance", "_versions");
    writeFileSync(path.join(versions, "secret.txt"), `SECRET-1234 of another file\n${"x".repeat(2000)}\n`);
    for (const file of manifests(path.join(dir, "objects.lance"))) {
      rmSync(file);
      symlinkSync("secret.txt", file);
    }
    const fresh = await LanceStore.open(dir, { expectedTables: () => ["index_idx_a"] });
    const error = await failure(() => fresh.listObjects(0, 10));
    expect(`${(error as EnvironmentError).message} ${(error as EnvironmentError).hint}`).not.toContain("SECRET");
    damageReported(error, path.join(dir, "objects.lance"), "its latest version manifest is missing or unreadable");
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

describe("what a failure is put down to", () => {
  // The check after a failure reads the data of the table the operation read, not of every table:
  // a search that failed on one table paid a scan of the whole database before its retry.
  it("an operation's failure is put down to damage of the data of the table it read, not of another", async () => {
    const { dir, store } = await filled();
    store.close();
    rmSync(path.join(dir, "index_idx_a.lance", "data"), { recursive: true });
    const fresh = await LanceStore.open(dir, { expectedTables: () => ["index_idx_a"] });
    const error = await failure(() => fresh.idsWhere("objects", "no_such_column = 1"));
    expect(error).toBeInstanceOf(InternalError);
    expect((error as InternalError).code).toBe("STORAGE_ERROR");
    damageReported(await failure(() => fresh.vectorSearch("index_idx_a", vector(0), 3)), path.join(dir, "index_idx_a.lance"), "a data file is missing or unreadable");
    fresh.close();
  });

  // The documented race of a search: the worker's cleanup removes a snapshot's version (its files)
  // while the snapshot reads it. The search runs again on the latest version, which is checked then.
  it("a snapshot whose version was cleaned up fails STORAGE_ERROR without a read of the data; the latest version's damage is found on the next snapshot", async () => {
    const { dir, store } = await filled();
    const snapshot = store.snapshot();
    expect(await snapshot.countRows("index_idx_a")).toBe(3); // (pins the version)
    const lancedb = await import("@lancedb/lancedb");
    const db = await lancedb.connect(dir);
    const table = await db.openTable("index_idx_a");
    await table.delete("id = 'a'");
    await table.optimize({ cleanupOlderThan: new Date(Date.now() + 1000), deleteUnverified: true });
    db.close();
    rmSync(path.join(dir, "index_idx_a.lance", "data"), { recursive: true }); // the latest version's data damaged too
    const error = await failure(() => snapshot.textSearch("index_idx_a", "text", 10));
    expect(error).toBeInstanceOf(InternalError);
    expect((error as InternalError).code).toBe("STORAGE_ERROR");
    damageReported(await failure(() => store.snapshot().textSearch("index_idx_a", "text", 10)), path.join(dir, "index_idx_a.lance"), "a data file is missing or unreadable");
    store.close();
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

describe("prewarming a vector index", () => {
  // A prewarm that failed was remembered as done: a long-running server never loaded the index again.
  it("a failed prewarm is tried again by the next search, not remembered as done", async () => {
    const dir = path.join(tempDir("semsearch-prewarm-"), "data");
    const store = await LanceStore.open(dir);
    await store.createIndexTable("index_idx_p", 4);
    const rows = Array.from({ length: 5_000 }, (_, i) => ({ id: `r${i}`, seq: i + 1, text: `text ${i}`, vector: Float32Array.from([Math.cos(i), Math.sin(i), i % 7, 1]) }));
    await store.upsertIndexRows("index_idx_p", rows);
    expect(await store.buildVectorIndexIfDue("index_idx_p")).toBe(true);
    store.close();
    const indices = path.join(dir, "index_idx_p.lance", "_indices");
    const saved = path.join(dir, "..", "indices-aside");
    renameSync(indices, saved);
    const fresh = await LanceStore.open(dir);
    const snapshot = fresh.snapshot();
    expect(await failure(() => snapshot.prewarmVectorIndex("index_idx_p"))).toBeInstanceOf(Error);
    expect(await failure(() => snapshot.prewarmVectorIndex("index_idx_p"))).toBeInstanceOf(Error); // tried again, still failing
    renameSync(saved, indices);
    await snapshot.prewarmVectorIndex("index_idx_p");
    fresh.close();
  });
});
