/**
 * What a bucket project keeps its state in, run on the local state store (the same protocol as on
 * S3, whose store passes the same record and lease tests): documents as versioned records (a removal
 * is an empty version), the write and worker leases with their store check, and the lease time.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { RecordDocs } from "../../../src/engine/project-docs.js";
import { LeaseLocks, leaseTtlMs } from "../../../src/engine/project-locks.js";
import { LocalStateStore } from "../../../src/engine/state/local-store.js";
import { acquireLease } from "../../../src/engine/state/lease.js";
import { waitFor } from "../../helpers/wait.js";

const fresh = () => new LocalStateStore(mkdtempSync(path.join(tmpdir(), "backend-")));
const Doc = v.object({ n: v.number() });

describe("documents as records", () => {
  it("reads what was written last, reads a removal as missing, and names where a document is", async () => {
    const store = fresh();
    const docs = new RecordDocs(store, "s3://bucket/p");
    expect(await docs.read("catalog.json", Doc)).toEqual({ ok: false, missing: true, reason: "missing" });
    expect(await docs.writtenAt("catalog.json")).toBeNull();
    await docs.write("catalog.json", { n: 1 });
    await docs.write("catalog.json", { n: 2 });
    expect(await docs.read("catalog.json", Doc)).toEqual({ ok: true, value: { n: 2 } });
    expect(await docs.writtenAt("catalog.json")).toBeGreaterThan(0);
    await docs.remove("catalog.json");
    await docs.remove("catalog.json"); // (nothing more is written for a second removal)
    expect(await docs.read("catalog.json", Doc)).toMatchObject({ ok: false, missing: true });
    expect(await store.list("catalog.json")).toHaveLength(3);
    expect(docs.where("progress/idx_a.json")).toBe("s3://bucket/p/state/progress/idx_a.json");
  });

  it("sees another process's newer version after caching its own, and reports a damaged one", async () => {
    const store = fresh();
    const mine = new RecordDocs(store, "x");
    const theirs = new RecordDocs(store, "x");
    await mine.write("seq", { n: 1 });
    expect(await mine.read("seq", Doc)).toMatchObject({ value: { n: 1 } });
    await theirs.write("seq", { n: 5 });
    expect(await mine.read("seq", Doc)).toMatchObject({ value: { n: 5 } });
    await store.createIfAbsent("seq/000000000003", "{not json");
    expect(await mine.read("seq", Doc)).toMatchObject({ ok: false, missing: false });
  });
});

describe("leases as the project's locks", () => {
  it("checks the store once, before the first lease, and again after a failed check", async () => {
    let checks = 0;
    let fail = true;
    const locks = new LeaseLocks(fresh(), async () => {
      checks++;
      if (fail) throw new Error("not conditional");
    });
    await expect(locks.acquireWrite(100)).rejects.toThrow("not conditional");
    fail = false;
    const first = await locks.acquireWrite(100);
    await first.release();
    await (await locks.acquireWrite(100)).release();
    await locks.checkStore();
    expect(checks).toBe(2);
  });

  it("one worker at a time; the write lease is waited for, named, and free again once released", async () => {
    const store = fresh();
    const a = new LeaseLocks(store, async () => {});
    const b = new LeaseLocks(store, async () => {});
    const release = await a.tryWorker();
    expect(release).not.toBeNull();
    expect(await b.tryWorker()).toBeNull();
    expect(await b.worker()).toMatchObject({ pid: process.pid });
    await release?.();
    expect(await b.worker()).toBeNull();

    const write = await a.acquireWrite(1_000);
    expect(write.fenceNeeded).toBe(false);
    expect(await b.writerLive()).toBe(true);
    expect(await b.describeWriter()).toContain(`process ${process.pid} on `);
    await expect(b.acquireWrite(50)).rejects.toMatchObject({ code: "LOCKED" });
    expect(await write.stillHeld()).toBe(true);
    await write.release();
    expect(await b.writerLive()).toBe(false);
    const next = await b.acquireWrite(1_000);
    expect(next.fenceNeeded).toBe(false);
    expect(await write.stillHeld()).toBe(false);
    await next.release();
  });

  it("takes over at once from a holder of this machine that is gone, and says to fence", async () => {
    const store = fresh();
    // A lease taken by a process that then exits without releasing it (killed).
    const script = `
      const { LocalStateStore } = await import(${JSON.stringify(new URL("../../../dist/engine/state/local-store.js", import.meta.url).href)});
      const { LeaseLocks } = await import(${JSON.stringify(new URL("../../../dist/engine/project-locks.js", import.meta.url).href)});
      await new LeaseLocks(new LocalStateStore(${JSON.stringify(store.where)}), async () => {}).acquireWrite(1000);
      process.kill(process.pid, "SIGKILL");`;
    spawnSync(process.execPath, ["--input-type=module", "-e", script]);
    const locks = new LeaseLocks(store, async () => {});
    expect(await locks.writerLive()).toBe(false);
    const started = Date.now();
    const taken = await locks.acquireWrite(5_000);
    expect(Date.now() - started).toBeLessThan(2_000); // (not the 30 s its lease lasts)
    expect(taken.fenceNeeded).toBe(true);
    await taken.release();
  });

  it("a holder on another machine is waited for, even with this machine's name", async () => {
    const store = fresh();
    // A record as a process on another boot of a machine of the same name would write.
    await store.createIfAbsent("leases/write/000000000001", JSON.stringify({ holder: { host: (await import("node:os")).hostname(), pid: 99_999_999, start: "other-boot:1", command: "semsearch objects add" }, ttlMs: 60_000 }));
    const locks = new LeaseLocks(store, async () => {});
    expect(await locks.writerLive()).toBe(true);
    await expect(locks.acquireWrite(50)).rejects.toMatchObject({ code: "LOCKED" });
    // …and taken once it expires or is released
    await store.createIfAbsent("leases/write/000000000001.released", "");
    await (await acquireLease(store, "write", { waitMs: 100 })).release();
  });
});

describe("a server's state reads, which may be a moment old", () => {
  it("are kept for maxAgeMs, but its own writes are read at once, a missing document is read each time, and a writer reads fresh", async () => {
    const inner = fresh();
    let lists = 0;
    const store = Object.assign(Object.create(inner) as LocalStateStore, {
      list: async (folder: string, after?: string, limit?: number) => {
        lists++;
        return inner.list(folder, after, limit);
      },
    });
    let writing = false;
    const server = new RecordDocs(store, "s3://b/p", { maxAgeMs: 60_000, mustBeFresh: () => writing });
    const other = new RecordDocs(inner, "s3://b/p");
    await other.write("catalog.json", { n: 1 });
    expect(await server.read("catalog.json", Doc)).toEqual({ ok: true, value: { n: 1 } });
    const before = lists;
    await other.write("catalog.json", { n: 2 });
    expect(await server.read("catalog.json", Doc)).toEqual({ ok: true, value: { n: 1 } }); // (kept: no request)
    expect(lists).toBe(before);
    writing = true;
    expect(await server.read("catalog.json", Doc)).toEqual({ ok: true, value: { n: 2 } });
    writing = false;
    await server.write("catalog.json", { n: 3 });
    expect(await server.read("catalog.json", Doc)).toEqual({ ok: true, value: { n: 3 } });
    expect(await server.read("seq", Doc)).toMatchObject({ ok: false, missing: true });
    await other.write("seq", { n: 7 });
    expect(await server.read("seq", Doc)).toEqual({ ok: true, value: { n: 7 } });
    // (and once maxAgeMs has passed, another's write is read)
    const soon = new RecordDocs(inner, "s3://b/p", { maxAgeMs: 50 });
    expect(await soon.read("catalog.json", Doc)).toEqual({ ok: true, value: { n: 3 } });
    await other.write("catalog.json", { n: 4 });
    await waitFor("the write to be read", async () => (await soon.read("catalog.json", Doc)).ok && JSON.stringify(await soon.read("catalog.json", Doc)).includes('"n":4'));
  });
});

describe("several workers of a bucket project", () => {
  it("join at once, are found by worker(), claim an index each, and leave nothing behind", async () => {
    const store = fresh();
    const a = new LeaseLocks(store, async () => {});
    const b = new LeaseLocks(store, async () => {});
    const leaveA = await a.joinWorkers();
    const leaveB = await b.joinWorkers();
    expect(await a.worker()).toMatchObject({ pid: process.pid });
    const claimed = await a.claim("idx_one");
    expect(claimed).not.toBeNull();
    expect(await b.claim("idx_one")).toBeNull();
    const other = await b.claim("idx_two");
    expect(other).not.toBeNull();
    expect(await claimed?.stillHeld()).toBe(true);
    await claimed?.release();
    expect(await claimed?.stillHeld()).toBe(false);
    const taken = await b.claim("idx_one");
    expect(await taken?.stillHeld()).toBe(true);
    await taken?.release();
    await other?.release();
    await leaveA();
    await leaveB();
    expect(await a.worker()).toBeNull();
    // (a folder left empty on a local store; a bucket has no empty folders)
    for (const name of (await store.list("leases")).filter((entry) => entry.startsWith("workers-"))) expect(await store.list(`leases/${name}`)).toEqual([]);
  });

  it("a killed worker's presence is dropped by the next worker that joins, never by a reader (who may not write)", async () => {
    const store = fresh();
    // (a presence left by a worker on another machine that was killed: never renewed, not released, 1 s)
    await acquireLease(store, "workers-0123456789abcdef", { ttlMs: 1000 });
    const writes: string[] = [];
    const watched = Object.assign(Object.create(store) as LocalStateStore, {
      remove: async (key: string) => {
        writes.push(key);
        await store.remove(key);
      },
    });
    const reader = new LeaseLocks(watched, async () => {});
    await waitFor("the presence to expire", async () => (await reader.worker()) === null);
    expect(await reader.describeWorker()).toBe("another process");
    expect(writes).toEqual([]);
    expect(await store.list("leases/workers-0123456789abcdef")).not.toEqual([]);
    const leave = await new LeaseLocks(store, async () => {}).joinWorkers();
    expect(await store.list("leases/workers-0123456789abcdef")).toEqual([]);
    await leave();
  });

  it("a local project's one worker holds every claim", async () => {
    const { FileLocks } = await import("../../../src/engine/project-locks.js");
    const locks = new FileLocks(mkdtempSync(path.join(tmpdir(), "local-")));
    const claim = await locks.claim();
    expect(await claim.stillHeld()).toBe(true);
  });
});

describe("SEMSEARCH_LEASE_SECONDS", () => {
  it.each([
    [undefined, 30_000],
    ["2", 2_000],
    ["1.5", 1_500],
    [" 60 ", 60_000],
    ["0", 30_000],
    ["0.5", 30_000],
    ["3601", 30_000],
    ["ten", 30_000],
    ["", 30_000],
  ])("%j is %d ms", (given, ms) => {
    expect(leaseTtlMs({ SEMSEARCH_LEASE_SECONDS: given })).toBe(ms);
  });
});

describe("records repaired by hand", () => {
  it("a process that read a damaged newest version sees the repair: the version removed and made again", async () => {
    const store = fresh();
    const server = new RecordDocs(store, "x");
    await server.write("catalog.json", { n: 1 });
    await store.createIfAbsent("catalog.json/000000000002", "{garbage");
    expect(await server.read("catalog.json", Doc)).toMatchObject({ ok: false, missing: false });
    await store.remove("catalog.json/000000000002");
    expect(await server.read("catalog.json", Doc)).toMatchObject({ ok: true, value: { n: 1 } });
    await new RecordDocs(store, "x").write("catalog.json", { n: 7 }); // another process: version 2 again
    expect(await server.read("catalog.json", Doc)).toMatchObject({ ok: true, value: { n: 7 } });
  });

  it("a folder where the newest version should be is damage naming its key, not a retry forever", async () => {
    const local = fresh();
    // (a bucket answers 404 for a key that is a folder's prefix; the local store would say EISDIR)
    const store = Object.assign(Object.create(local) as LocalStateStore, { get: async (key: string) => (key.endsWith("/000000000002") ? null : local.get(key)) });
    const docs = new RecordDocs(store, "x");
    await docs.write("progress/idx_a.json", { n: 1 });
    await store.createIfAbsent("progress/idx_a.json/000000000002/oops", "{}");
    expect(await docs.read("progress/idx_a.json", Doc)).toEqual({ ok: false, missing: false, reason: expect.stringContaining("progress/idx_a.json/000000000002 is not a record") });
    await expect(docs.write("progress/idx_a.json", { n: 2 })).rejects.toMatchObject({ code: "CORRUPT_PROJECT", exitCode: 6 });
  });
});

describe("damage in a bucket's record", () => {
  it("is named as a record, and the hint says how versions mend it", async () => {
    const { damaged } = await import("../../../src/engine/state-files.js");
    const error = damaged("s3://b/p/state/catalog.json", "not valid JSON", "Restore it from a backup.");
    expect(error.message).toBe("The project record s3://b/p/state/catalog.json is damaged: not valid JSON");
    expect(error.hint).toContain("Restore it from a backup. In a bucket, s3://b/p/state/catalog.json/ is a folder of numbered versions");
    expect(damaged("/p/catalog.json", "x", "Restore it.").hint).toBe("Restore it.");
  });
});
