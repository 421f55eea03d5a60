/**
 * Faults and concurrency through the real CLI: the background worker killed with SIGKILL at
 * seeded random points of its progress, an `objects add` killed mid-write, parallel adds, deletes and searches during
 * indexing. Row counts are read straight from LanceDB (dist/ engine store) to see duplicates.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { cliJson, runCli, tempProject } from "../helpers/cli.js";

/** How far the worker has indexed an index, from the progress file it writes (0 before the first). */
function indexedSeq(project: string, index: string): number {
  const file = path.join(project, "progress", `${index}.json`);
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as { indexedSeq: number }).indexedSeq : 0;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const SUBJECTS = ["river", "market", "engine", "garden", "violin", "glacier", "harbour", "orchard", "tunnel", "comet"];
const VERBS = ["flooded", "reopened", "stalled", "bloomed", "echoed", "melted", "filled", "ripened", "collapsed", "appeared"];

function objects(count: number, prefix = "o", extra: object = {}): string {
  return Array.from({ length: count }, (_, i) =>
    JSON.stringify({ id: `${prefix}${i}`, text: `The ${SUBJECTS[i % 10]} ${VERBS[Math.floor(i / 10) % 10]} in year ${i}.`, ...extra }),
  ).join("\n");
}

/** Mulberry32, so the kill points are the same on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type StoreModule = typeof import("../../src/engine/store/lance-store.js");
/** The project's LanceDB, through the built store (the same code the CLI runs). */
async function store(project: string) {
  const { LanceStore } = (await import(new URL("../../dist/engine/store/lance-store.js", import.meta.url).href)) as StoreModule;
  return LanceStore.open(path.join(project, "data"));
}

/** Every id of a table's rows (duplicates kept). */
async function rowIds(project: string, table: string): Promise<string[]> {
  const s = await store(project);
  try {
    return await s.rowIds(table);
  } finally {
    s.close();
  }
}

const QUERIES = ["glacier melted", "a violin echoed", "the harbour in year 1500", "orchard ripened", "comet"];
async function searches(project: string, index: string) {
  const out = [];
  for (const query of QUERIES) out.push((await cliJson(project, ["search", index, query, "--limit", "20"])).results.map((r: { id: string }) => r.id));
  return out;
}

describe("the background worker killed with SIGKILL", () => {
  it("resumes: every object indexed exactly once, and search returns what an uninterrupted run returns", async () => {
    const COUNT = 640; // five of the worker's batches of 128, so the five kills land at work
    const input = objects(COUNT);
    const clean = tempProject();
    await cliJson(clean, ["objects", "add", "-"], { input });
    const cleanIndex = (await cliJson(clean, ["index", "create", "--wait"])).id;

    const crashed = tempProject();
    await cliJson(crashed, ["objects", "add", "-"], { input });
    const index = (await cliJson(crashed, ["index", "create"])).id;
    // Five kills, each once the worker has indexed past a seeded random point of its own progress
    // (read from the progress file it writes), so every kill lands while it is at work.
    const random = seeded(7);
    // (the last target stays below 60% of the work: a worker resumed near the end finishes its last batch
    // and exits within its 1.5 s linger, and a loaded machine's `worker status` could miss it, waiting for ever)
    const targets = Array.from({ length: 5 }, (_, round) => Math.floor(((round + random()) / 5) * COUNT * 0.6));
    let kills = 0;
    for (const target of targets) {
      for (;;) {
        // the next command finds the work pending and no live worker, and starts one
        const worker = await cliJson(crashed, ["worker", "status"]);
        if (worker.running && indexedSeq(crashed, index) >= target) {
          process.kill(worker.pid, "SIGKILL");
          kills++;
          for (let i = 0; i < 500 && processAlive(worker.pid); i++) await sleep(20);
          break;
        }
        await sleep(100);
      }
    }
    expect(kills).toBe(5);
    const status = await cliJson(crashed, ["index", "status", index, "--wait"]);
    expect(status.status).toEqual({ UPLOADED: 0, PROCESSING: 0, READY: COUNT, ERROR: 0 });

    const ids = await rowIds(crashed, `index_${index}`);
    expect(ids.length).toBe(COUNT);
    expect(new Set(ids).size).toBe(COUNT);
    expect(await searches(crashed, index)).toEqual(await searches(clean, cleanIndex));
  });
});

describe("an objects add killed mid-write", () => {
  it("leaves nothing of it: the next command rolls the object store back", async () => {
    const project = tempProject();
    await cliJson(project, ["objects", "add", "-"], { input: objects(50, "keep") });
    const big = path.join(path.dirname(project), "big.jsonl");
    writeFileSync(big, objects(10_000, "big", { pad: "x".repeat(200) }));
    // killed (SIGKILL, by its crash point) right after its third batch of 2,000 objects is committed
    const killed = await runCli(["--project", project, "objects", "add", big], { env: { SEMSEARCH_FAILPOINT: "add:batch@3" } });
    expect(killed.signal).toBe("SIGKILL");
    const journal = path.join(project, "add.journal");
    expect(existsSync(journal)).toBe(true); // it was writing
    const before = await store(project);
    expect(await before.countObjects()).toBe(50 + 6000); // three batches had landed
    before.close();

    const missing = await runCli(["--project", project, "--json", "objects", "get", "big0"]);
    expect(missing.exitCode).toBe(3);
    expect(existsSync(journal)).toBe(false);
    const s = await store(project);
    expect(await s.countObjects()).toBe(50);
    s.close();
    // and the store still takes writes
    await cliJson(project, ["objects", "add", "-"], { input: objects(5, "after") });
    expect((await cliJson(project, ["objects", "list", "--limit", "1000"])).objects.length).toBe(55);
  });
});

describe("large adds", () => {
  it("an id repeated across write batches keeps its last object; re-adding keeps created_at", async () => {
    const project = tempProject();
    const lines = objects(4500, "x").split("\n");
    lines[4400] = JSON.stringify({ id: "x10", text: "the last version" }); // x10 again, two batches later
    const added = await cliJson(project, ["objects", "add", "-"], { input: lines.join("\n") });
    expect(added.count).toBe(4499);
    const first = await cliJson(project, ["objects", "get", "x10"]);
    expect(first.object.text).toBe("the last version");
    await cliJson(project, ["objects", "add", "-"], { input: JSON.stringify({ id: "x10", text: "replaced later" }) });
    const second = await cliJson(project, ["objects", "get", "x10"]);
    expect(second.object.text).toBe("replaced later");
    expect(second.created_at).toBe(first.created_at);
    expect(await rowIds(project, "objects").then((ids) => [ids.length, new Set(ids).size])).toEqual([4499, 4499]);
  });
});

describe("concurrent use", () => {
  it("two adds at once: disjoint ids all land, overlapping ids come whole from one of them", async () => {
    const project = tempProject();
    const a = `${objects(400, "a")}\n${objects(300, "both", { version: "A" })}`;
    const b = `${objects(400, "b")}\n${objects(300, "both", { version: "B" })}`;
    const [ra, rb] = await Promise.all([
      runCli(["--project", project, "--json", "objects", "add", "-"], { input: a }),
      runCli(["--project", project, "--json", "objects", "add", "-"], { input: b }),
    ]);
    expect([ra.exitCode, rb.exitCode, ra.stderr, rb.stderr]).toEqual([0, 0, "", ""]);
    const listed = (await cliJson(project, ["objects", "list", "--limit", "2000"])).objects as { id: string; object: { version?: string } }[];
    expect(listed.length).toBe(1100);
    const versions = new Set(listed.filter((o) => o.id.startsWith("both")).map((o) => o.object.version));
    expect(versions.size).toBe(1);
  });

  it("searching while the worker indexes never fails and never returns a deleted object", async () => {
    const project = tempProject();
    await cliJson(project, ["objects", "add", "-"], { input: objects(1200) });
    const index = (await cliJson(project, ["index", "create"])).id;
    // worker status tells what the worker is doing
    let worker = await cliJson(project, ["worker", "status"]);
    for (let i = 0; i < 20 && worker.state?.phase !== "indexing"; i++) worker = await cliJson(project, ["worker", "status"]);
    expect(worker).toMatchObject({ running: true, state: { pid: worker.pid, phase: "indexing", index } });
    expect(worker.state.pending).toBeGreaterThan(0);
    const deleted: string[] = [];
    for (let i = 0; i < 6; i++) {
      const id = `o${i * 10 + 5}`; // "The glacier …" objects: good matches for the query
      await cliJson(project, ["objects", "delete", id]);
      deleted.push(id);
      const result = await runCli(["--project", project, "--json", "search", index, "glacier melted", "--limit", "100"]);
      expect(result.exitCode, result.stderr).toBe(0);
      const ids = JSON.parse(result.stdout).results.map((r: { id: string }) => r.id);
      for (const id of deleted) expect(ids).not.toContain(id);
    }
    const status = await cliJson(project, ["index", "status", index, "--wait"]);
    expect(status.status.READY).toBe(1200 - deleted.length);
    const ids = await rowIds(project, `index_${index}`);
    for (const id of deleted) expect(ids).not.toContain(id);
  });
});
