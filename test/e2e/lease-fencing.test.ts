/**
 * The lease protocol across processes on a real LanceDB table (docs/design/object-storage.md): a
 * holder that stopped past its lease (SIGSTOP, or held before its commit) and then resumes cannot
 * commit on the table once a taker fenced it, and a commit that lands between the taker's read and
 * its fence is erased but never acknowledged. Rows are upserted by id; every id ends up once.
 *
 * The holder is a separate Node process running the built modules (dist/) and LanceDB; the test
 * process is the taker.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import * as lancedb from "@lancedb/lancedb";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";
import { waitFor, within } from "../helpers/wait.js";

const LANCEDB = pathToFileURL(createRequire(path.join(ROOT, "package.json")).resolve("@lancedb/lancedb")).href;
const dist = (file: string) => pathToFileURL(path.join(ROOT, "dist", "engine", "state", file)).href;

/**
 * The holder: takes lease `index-a` (ttl from argv), opens the table (its base version), checks that
 * it holds the lease, says "checked", waits for "go" on stdin, upserts ids c1..c5, checks again, and
 * reports whether it committed and whether it acknowledged.
 */
const HOLDER = `
import * as lancedb from ${JSON.stringify(LANCEDB)};
import { createInterface } from "node:readline";
import { acquireLease } from ${JSON.stringify(dist("lease.js"))};
import { LocalStateStore } from ${JSON.stringify(dist("local-store.js"))};
const [dbDir, stateDir, ttl, keepAlive] = process.argv.slice(2);
const say = (value) => process.stdout.write(JSON.stringify(value) + "\\n");
const lease = await acquireLease(new LocalStateStore(stateDir), "index-a", { ttlMs: Number(ttl), waitMs: 0 });
if (keepAlive === "1") lease.keepAlive(() => say({ lost: true }));
const table = await (await lancedb.connect(dbDir)).openTable("t");
say({ checked: await lease.holds(), token: lease.token, base: await table.version() });
const lines = createInterface({ input: process.stdin });
for await (const line of lines) if (line === "go") break;
let committed = false, error = null;
try {
  await table.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(["c1","c2","c3","c4","c5"].map((id) => ({ id, by: "holder" })));
  committed = true;
} catch (caught) { error = String(caught.message).split("\\n")[0]; }
say({ committed, error, acknowledged: committed && (await lease.holds()) });
process.exit(0);
`;

let children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of children) child.kill("SIGKILL");
  children = [];
});

async function setup(): Promise<{ dir: string; dbDir: string; stateDir: string }> {
  const dir = mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "fence-"));
  const dbDir = path.join(dir, "data");
  const db = await lancedb.connect(dbDir);
  await db.createTable("t", [{ id: "seed", by: "seed" }]);
  db.close();
  writeFileSync(path.join(dir, "holder.mjs"), HOLDER);
  return { dir, dbDir, stateDir: path.join(dir, "state") };
}

/** Starts the holder; resolves with it and an iterator of its JSON lines once it says "checked". */
async function startHolder(dir: string, dbDir: string, stateDir: string, ttlMs: number, keepAlive: boolean) {
  const child = spawn(process.execPath, [path.join(dir, "holder.mjs"), dbDir, stateDir, String(ttlMs), keepAlive ? "1" : "0"], { cwd: ROOT });
  children.push(child);
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<Record<string, unknown>> => {
    const line = await within(`the holder's output (stderr: ${stderr})`, lines.next());
    if (line.done) throw new Error(`the holder ended: ${stderr}`);
    return JSON.parse(line.value as string) as Record<string, unknown>;
  };
  const checked = await next();
  expect(checked).toMatchObject({ checked: true, token: 1 });
  return { child, next };
}

/** The taker's side, in this process: waits for the lease to expire, takes it, and says if it must fence. */
async function takeOver(stateDir: string, skew = 0) {
  const { acquireLease, leaseState } = (await import(dist("lease.js"))) as typeof import("../../src/engine/state/lease.js");
  const { LocalStateStore } = (await import(dist("local-store.js"))) as typeof import("../../src/engine/state/local-store.js");
  const store = new (class extends LocalStateStore {
    override async now(): Promise<number> {
      return Date.now() + skew;
    }
  })(stateDir);
  await waitFor("the holder's lease to expire", async () => ((await leaseState(store, "index-a"))?.expiresAt ?? 0) <= (await store.now()));
  const lease = await acquireLease(store, "index-a", { waitMs: 0, ttlMs: 60_000 });
  expect(lease).toMatchObject({ token: 2, fenceNeeded: true });
  return lease;
}

/** The store's fence (LanceStore.fence, built): a Restore of each table's latest version. */
async function storeFence(dbDir: string): Promise<void> {
  const { LanceStore } = (await import(pathToFileURL(path.join(ROOT, "dist", "engine", "store", "lance-store.js")).href)) as typeof import("../../src/engine/store/lance-store.js");
  const store = await LanceStore.open(dbDir);
  try {
    await store.fence(["t"]);
  } finally {
    store.close();
  }
}

/** The fence in two steps, the latest version read first: to land a commit between them. */
async function fence(table: lancedb.Table, version: number): Promise<void> {
  await table.checkout(version);
  await table.restore();
}

async function rows(dbDir: string): Promise<{ id: string; by: string }[]> {
  const table = await (await lancedb.connect(dbDir)).openTable("t");
  return ((await table.query().toArray()) as { id: string; by: string }[]).map(({ id, by }) => ({ id, by })).sort((a, b) => a.id.localeCompare(b.id));
}

const upsert = (table: lancedb.Table, by: string) =>
  table.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(["c1", "c2", "c3", "c4", "c5"].map((id) => ({ id, by })));

const expected = (by: string) => [...["c1", "c2", "c3", "c4", "c5"].map((id) => ({ id, by })), { id: "seed", by: "seed" }];

describe("a holder past its lease cannot commit once the taker fenced", () => {
  it("SIGSTOPped while renewing, resumed after a takeover: its commit is refused, and each id is there once", async () => {
    const { dir, dbDir, stateDir } = await setup();
    const { child, next } = await startHolder(dir, dbDir, stateDir, 300, true);
    child.kill("SIGSTOP");
    await takeOver(stateDir);
    await storeFence(dbDir);
    const table = await (await lancedb.connect(dbDir)).openTable("t");
    await upsert(table, "taker");
    child.kill("SIGCONT");
    child.stdin.write("go\n");
    const report = await next();
    if ("lost" in report) expect(await next()).toMatchObject({ committed: false, acknowledged: false });
    else expect(report).toMatchObject({ committed: false, acknowledged: false });
    expect(await rows(dbDir)).toEqual(expected("taker"));
  });

  it("a commit that lands between the taker's read and its fence is erased, and its holder does not acknowledge it", async () => {
    const { dir, dbDir, stateDir } = await setup();
    const { child, next } = await startHolder(dir, dbDir, stateDir, 300, false);
    await takeOver(stateDir);
    const table = await (await lancedb.connect(dbDir)).openTable("t");
    const latest = await table.version();
    child.stdin.write("go\n");
    expect(await next()).toMatchObject({ committed: true, acknowledged: false });
    await fence(table, latest);
    expect(await rows(dbDir)).toEqual([{ id: "seed", by: "seed" }]);
    await upsert(table, "taker");
    expect(await rows(dbDir)).toEqual(expected("taker"));
  });

  it("a holder whose commit lands before the taker reads keeps it, acknowledged; the taker's upsert replaces each row once", async () => {
    const { dir, dbDir, stateDir } = await setup();
    const { child, next } = await startHolder(dir, dbDir, stateDir, 60_000, false);
    child.stdin.write("go\n"); // (it commits while it holds the lease, and acknowledges)
    expect(await next()).toMatchObject({ committed: true, acknowledged: true });
    await takeOver(stateDir, 120_000); // (its lease expired since: the store's clock moved on)
    await storeFence(dbDir);
    const table = await (await lancedb.connect(dbDir)).openTable("t");
    expect(await rows(dbDir)).toEqual(expected("holder"));
    await upsert(table, "taker");
    expect(await rows(dbDir)).toEqual(expected("taker"));
  });
});
