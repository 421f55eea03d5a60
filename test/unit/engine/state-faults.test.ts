/**
 * The state store and leases under faults an outside tester would try: a folder where a record
 * should be, a reader that pauses while the holder renews.
 */
import { mkdirSync, mkdtempSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { acquireLease, leaseState } from "../../../src/engine/state/lease.js";
import { LocalStateStore } from "../../../src/engine/state/local-store.js";
import type { StateStore } from "../../../src/engine/state/store.js";
import { s3Available, s3TestStore } from "../../helpers/s3-state.js";

/** A local store whose clock can be moved on. */
class ClockedStore extends LocalStateStore {
  skew = 0;
  override async now(): Promise<number> {
    return Date.now() + this.skew;
  }
}

/** A store that calls `onGet` before each read, and refuses to read more than `limit` times (a loop fails the test instead of hanging it). */
class Watched implements StateStore {
  gets = 0;
  onGet: ((key: string) => Promise<void>) | null = null;
  constructor(
    private readonly inner: StateStore,
    private readonly limit = 200,
  ) {}
  get where() {
    return this.inner.where;
  }
  get = async (key: string) => {
    if (++this.gets > this.limit) throw new Error(`read ${this.limit} records: looping`);
    await this.onGet?.(key);
    return this.inner.get(key);
  };
  createIfAbsent = (key: string, body: string) => this.inner.createIfAbsent(key, body);
  list = (folder: string, after?: string) => this.inner.list(folder, after);
  remove = (key: string) => this.inner.remove(key);
  now = () => this.inner.now();
}

describe("leases on a local store", () => {
  it("a reader that pauses between listing and reading while the holder renews twice still sees a live lease", async () => {
    const store = new ClockedStore(mkdtempSync(path.join(tmpdir(), "state-")));
    const held = await acquireLease(store, "w", { ttlMs: 60_000 });
    // Taken 50 s ago and renewed since: the token alone would expire in 10 s, its heartbeats in 60.
    const record = path.join(store.where, "leases", "w", "000000000001");
    utimesSync(record, new Date(Date.now() - 50_000), new Date(Date.now() - 50_000));
    for (let i = 0; i < 3; i++) expect(await held.renew()).toBe(true);
    store.skew = 20_000;
    const reader = new Watched(store);
    // The reader lists the heartbeats, then pauses while the holder renews twice (removing the one it listed).
    let paused = false;
    reader.onGet = async (key) => {
      if (!key.includes(".hb.") || paused) return;
      paused = true;
      await held.renew();
      await held.renew();
    };
    await expect(acquireLease(reader, "w", { waitMs: 0 })).rejects.toThrow(/held by/);
    expect(await held.holds()).toBe(true);
    expect((await leaseState(store, "w"))?.token).toBe(1);
  });
});

const s3 = s3Available() ? describe : describe.skip;

s3("the state store on S3", () => {
  it("a folder where a lease's newest token should be is named as damage, not read in a loop", async () => {
    const inner = await s3TestStore();
    await inner.createIfAbsent("leases/w/000000000001", JSON.stringify({ holder: { host: "h", pid: 1, command: "x" }, ttlMs: 60_000 }));
    await inner.createIfAbsent("leases/w/000000000002/stray", "");
    const store = new Watched(inner);
    const error = await acquireLease(store, "w", { waitMs: 0 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).not.toMatch(/looping/);
    expect((error as { code?: string }).code).toBe("CORRUPT_PROJECT");
    expect((error as Error).message).toContain("leases/w/000000000002");
  });
});

describe("the local state store", () => {
  it("a folder where a record should be is an error naming it", async () => {
    const store = new LocalStateStore(mkdtempSync(path.join(tmpdir(), "state-")));
    mkdirSync(path.join(store.where, "leases", "w", "000000000001"), { recursive: true });
    await expect(acquireLease(new Watched(store), "w", { waitMs: 0 })).rejects.toThrow(/000000000001/);
  });
});
