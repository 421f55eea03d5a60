/**
 * The state store of a local project (records made whole, create-if-absent) and leases over it:
 * one holder at a time, taken over only once released, expired (by the store's clock) or its holder
 * known dead, and a takeover of an unreleased lease says that the taker must fence.
 */
import { mkdtempSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConflictError } from "../../../src/engine/errors.js";
import { acquireLease, leaseState } from "../../../src/engine/state/lease.js";
import { LocalStateStore } from "../../../src/engine/state/local-store.js";
import type { StateStore } from "../../../src/engine/state/store.js";
import { s3Available, s3TestStore } from "../../helpers/s3-state.js";

/** A local store whose clock can be moved on, so that expiry is tested without waiting. */
class ClockedStore extends LocalStateStore {
  skew = 0;
  override async now(): Promise<number> {
    return Date.now() + this.skew;
  }
}

const fresh = () => new ClockedStore(mkdtempSync(path.join(tmpdir(), "state-")));

/** Any store, with its clock movable (`skew`), for the lease rules that hold on every store. */
class Skewed implements StateStore {
  skew = 0;
  constructor(private readonly inner: StateStore) {}
  get where() {
    return this.inner.where;
  }
  get = (key: string) => this.inner.get(key);
  createIfAbsent = (key: string, body: string) => this.inner.createIfAbsent(key, body);
  list = (folder: string, after?: string) => this.inner.list(folder, after);
  remove = (key: string) => this.inner.remove(key);
  now = async () => (await this.inner.now()) + this.skew;
}

/** The stores the lease rules are checked on: local always; S3 when the tests have a server (.ci/s3-server). */
const stores: [string, () => Promise<Skewed>][] = [["local", async () => new Skewed(fresh())]];
if (s3Available()) stores.push(["s3", async () => new Skewed(await s3TestStore())]);

describe("the local state store", () => {
  it("creates a record whole once; a second create of the key writes nothing", async () => {
    const store = fresh();
    expect(await store.createIfAbsent("a/b/c", "one")).toBe(true);
    expect(await store.createIfAbsent("a/b/c", "two")).toBe(false);
    const record = await store.get("a/b/c");
    expect(record?.body).toBe("one");
    expect(Math.abs((record?.writtenAt ?? 0) - Date.now())).toBeLessThan(60_000);
    expect(await store.get("a/b/missing")).toBeNull();
    expect(readdirSync(path.join(store.where, "a", "b"))).toEqual(["c"]); // no temporary file left
  });

  it("of many concurrent creates of one key, exactly one wins", async () => {
    const store = fresh();
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => store.createIfAbsent("k", String(i))));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await store.get("k")).toMatchObject({ body: String(results.indexOf(true)) });
  });

  it("lists the records of a folder in byte order, without temporary files or subfolders' records", async () => {
    const store = fresh();
    for (const key of ["f/b", "f/a", "f/B", "f/sub/x"]) await store.createIfAbsent(key, "");
    writeFileSync(path.join(store.where, "f", ".a.123.tmp"), "half");
    expect(await store.list("f")).toEqual(["B", "a", "b", "sub"]);
    expect(await store.list("none")).toEqual([]);
    await store.remove("f/a");
    await store.remove("f/a");
    expect(await store.list("f")).toEqual(["B", "b", "sub"]);
  });

  it.each(["", "/a", "a/", "a//b", "../a", "a/..", ".hidden", "a b", "a\nb"])("refuses the key %j", async (key) => {
    await expect(fresh().createIfAbsent(key, "")).rejects.toThrow(/not a state key/);
  });
});

describe.each(stores)("leases on a %s store", (_kind, make) => {
  it("one holder at a time: a second taker waits, then gives up naming the holder", async () => {
    const store = await make();
    const first = await acquireLease(store, "write");
    expect(first.token).toBe(1);
    expect(first.fenceNeeded).toBe(false);
    const error = await acquireLease(store, "write", { waitMs: 50 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as ConflictError).code).toBe("LOCKED");
    expect((error as ConflictError).message).toContain(`process ${process.pid}`);
    expect(await first.holds()).toBe(true);
  });

  it("a released lease is taken at once by the next token, without a fence", async () => {
    const store = await make();
    const first = await acquireLease(store, "write");
    await first.release();
    const second = await acquireLease(store, "write", { waitMs: 0 });
    expect(second.token).toBe(2);
    expect(second.fenceNeeded).toBe(false);
    expect(await first.holds()).toBe(false);
    expect(await second.holds()).toBe(true);
  });

  it("an expired lease (by the store's clock) is taken over with a fence; the old holder no longer holds", async () => {
    const store = await make();
    const first = await acquireLease(store, "index-a", { ttlMs: 60_000 });
    await expect(acquireLease(store, "index-a", { waitMs: 0 })).rejects.toThrow(/held by/);
    store.skew = 61_000;
    expect(await first.holdsFor(0)).toBe(false); // expired: not safe to commit on
    const second = await acquireLease(store, "index-a", { waitMs: 0 });
    expect(second).toMatchObject({ token: 2, fenceNeeded: true });
    expect(await first.holds()).toBe(false);
    expect(await first.renew()).toBe(false);
    await first.release(); // a stale holder's release frees nothing
    expect((await leaseState(store, "index-a"))?.released).toBe(false);
    store.skew = 0; // (the new lease was written on the store's real clock)
    await expect(acquireLease(store, "index-a", { waitMs: 0 })).rejects.toThrow(/held by/);
  });

  it("a holder known dead is taken over before expiry, with a fence", async () => {
    const store = await make();
    await acquireLease(store, "w");
    const taken = await acquireLease(store, "w", { waitMs: 0, holderDead: (holder) => holder.pid === process.pid });
    expect(taken).toMatchObject({ token: 2, fenceNeeded: true });
  });

  it("of concurrent takers of an expired lease, exactly one wins each token, and older tokens' records are pruned", async () => {
    const store = await make();
    await acquireLease(store, "w", { ttlMs: 1000 });
    store.skew = 2000;
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => acquireLease(store, "w", { waitMs: 0, ttlMs: 60_000 })));
    const won = results.filter((result) => result.status === "fulfilled");
    expect(won).toHaveLength(1);
    expect(won[0]?.status === "fulfilled" && won[0].value.token).toBe(2);
    expect(await store.list("leases/w")).toEqual(["000000000002"]);
  });

  // A taker that looked (token 1 expired), then paused while others took tokens 2 and 3 (pruning 2),
  // then created token 2 again: it must see that token 3 is newer, and neither hold nor fence.
  it("a taker that paused past newer takers and re-creates a pruned token does not hold the lease", async () => {
    const store = await make();
    await acquireLease(store, "w", { ttlMs: 1000 });
    store.skew = 2000;
    const paused = new (class extends Skewed {
      hook: (() => Promise<void>) | null = async () => {
        await (await acquireLease(store, "w", { waitMs: 0 })).release();
        await acquireLease(store, "w", { waitMs: 0, ttlMs: 600_000 });
      };
      override createIfAbsent = async (key: string, body: string) => {
        const hook = this.hook;
        this.hook = null;
        if (hook) await hook();
        return store.createIfAbsent(key, body);
      };
    })(store);
    paused.skew = 2000;
    await expect(acquireLease(paused, "w", { waitMs: 0 })).rejects.toThrow(/held by/);
    expect((await leaseState(store, "w"))?.token).toBe(3);
  });

  it("a damaged token record still holds the lease until it expires", async () => {
    const store = await make();
    await store.createIfAbsent("leases/w/000000000001", "{not json");
    await expect(acquireLease(store, "w", { waitMs: 0 })).rejects.toThrow(/held by another process/);
    store.skew = 31_000;
    expect(await acquireLease(store, "w", { waitMs: 0 })).toMatchObject({ token: 2, fenceNeeded: true });
  });

  it("keepAlive reports a lease lost to a taker", async () => {
    const store = await make();
    const held = await acquireLease(store, "w", { ttlMs: 30 });
    store.skew = 1000;
    await acquireLease(store, "w", { waitMs: 0 });
    const lost = await new Promise<boolean>((resolve) => held.keepAlive(() => resolve(true)));
    expect(lost).toBe(true);
  });
});

describe("leases on a local store", () => {
  it("heartbeats keep a lease: renewed, it outlives its first expiry", async () => {
    const store = fresh();
    const held = await acquireLease(store, "w", { ttlMs: 60_000 });
    const record = path.join(store.where, "leases", "w", "000000000001");
    utimesSync(record, new Date(Date.now() - 10_000), new Date(Date.now() - 10_000)); // taken 10 s ago
    const before = (await leaseState(store, "w"))?.expiresAt ?? 0;
    expect(await held.renew()).toBe(true);
    expect((await leaseState(store, "w"))?.expiresAt).toBeGreaterThan(before);
    store.skew = 50_000;
    expect(await held.holdsFor(5_000)).toBe(true);
    expect(await held.holdsFor(20_000)).toBe(false);
    for (let i = 0; i < 5; i++) expect(await held.renew()).toBe(true);
    expect((await store.list("leases/w")).filter((name) => name.includes(".hb.")).length).toBeLessThanOrEqual(2); // old heartbeats are removed
  });

});
