/**
 * The state store and leases under faults an outside tester would try: a folder where a record
 * should be, a reader that pauses while the holder renews, and (on S3) a create-if-absent whose
 * answer is lost after the store wrote it, so that the SDK's retry is refused with 412.
 */
import { mkdirSync, mkdtempSync, utimesSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { acquireLease, leaseState } from "../../../src/engine/state/lease.js";
import { LocalStateStore } from "../../../src/engine/state/local-store.js";
import { readRecord, updateRecord } from "../../../src/engine/state/record.js";
import { s3Config } from "../../../src/engine/state/s3-config.js";
import { S3StateStore } from "../../../src/engine/state/s3-store.js";
import type { StateStore } from "../../../src/engine/state/store.js";
import { s3Env } from "../../helpers/s3.js";
import { s3Available, s3TestStore, testBucket } from "../../helpers/s3-state.js";

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

describe("damaged lease records", () => {
  it.each([
    ["a ttl no holder would ask for", { holder: { host: "h", pid: 1, command: "semsearch" }, ttlMs: 1e308 }],
    ["a holder that is not one", { holder: "x", ttlMs: 60_000 }],
    ["a ttl that is not a number of milliseconds", { holder: null, ttlMs: "60000" }],
  ])("%s: it is held by no named holder, and expires", async (_what, body) => {
    const store = new ClockedStore(mkdtempSync(path.join(tmpdir(), "state-")));
    await store.createIfAbsent("leases/w/000000000001", JSON.stringify(body));
    const error = await acquireLease(store, "w", { waitMs: 0 }).catch((caught: unknown) => caught);
    expect((error as Error).message).toMatch(/held by (another process|process 1 on h \(semsearch\)):/); // never "process undefined"
    store.skew = 61_000; // (past the default 30 s and the record's own 60 s)
    expect(await acquireLease(store, "w", { waitMs: 0 })).toMatchObject({ token: 2, fenceNeeded: true });
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

  describe("a create-if-absent whose answer is lost after the store wrote it", () => {
    let proxy: { url: string; drop: (match: string) => void; close: () => Promise<void> };

    /** A loopback proxy to the tests' S3 server that, once per `drop(match)`, forwards a PUT whose path holds `match` and then cuts the connection instead of answering. */
    async function startProxy() {
      const target = new URL(s3Env().AWS_ENDPOINT_URL as string);
      let dropping: string | null = null;
      const server = http.createServer((request, response) => {
        const upstream = http.request({ host: target.hostname, port: target.port, method: request.method, path: request.url, headers: request.headers }, (answer) => {
          if (dropping !== null && request.method === "PUT" && (request.url ?? "").includes(dropping)) {
            dropping = null;
            answer.resume();
            answer.on("end", () => request.socket.destroy()); // written by the store; its answer never arrives
            return;
          }
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        });
        upstream.on("error", () => response.destroy());
        request.pipe(upstream);
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        drop: (match: string) => void (dropping = match),
        close: () => new Promise<void>((resolve) => server.close(() => resolve())),
      };
    }

    afterAll(async () => proxy?.close());

    async function proxiedStore(): Promise<S3StateStore> {
      proxy ??= await startProxy();
      return S3StateStore.open(await testBucket(), `lost-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`, s3Config({ ...process.env, AWS_ENDPOINT_URL: proxy.url }));
    }

    it("counts as written: the retry's 412 is its own write", async () => {
      const store = await proxiedStore();
      proxy.drop("/k1");
      expect(await store.createIfAbsent("k1", "mine")).toBe(true);
      expect((await store.get("k1"))?.body).toBe("mine");
      expect(await store.createIfAbsent("k1", "again")).toBe(false); // a real second create is still refused
      store.close();
    });

    it("a record change is applied once, and a lease taken is held", async () => {
      const store = await proxiedStore();
      proxy.drop("/counter/000000000001");
      await updateRecord(store, "counter", (body) => String(Number(body ?? "0") + 1));
      expect(await readRecord(store, "counter")).toMatchObject({ version: 1, body: "1" });
      proxy.drop("/leases/w/000000000001");
      const held = await acquireLease(store, "w", { waitMs: 2_000 });
      expect(held.token).toBe(1);
      expect(await held.holds()).toBe(true);
      store.close();
    });
  });
});

describe("the local state store", () => {
  it("a folder where a record should be is an error naming it", async () => {
    const store = new LocalStateStore(mkdtempSync(path.join(tmpdir(), "state-")));
    mkdirSync(path.join(store.where, "leases", "w", "000000000001"), { recursive: true });
    await expect(acquireLease(new Watched(store), "w", { waitMs: 0 })).rejects.toThrow(/000000000001/);
  });
});
