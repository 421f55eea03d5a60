/**
 * Versioned records over the state store: a write makes the next version with create-if-absent, so
 * concurrent changes each land once, in some order, and none is lost; on a local directory and, when
 * the tests have one, a real S3-compatible server.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { LocalStateStore } from "../../../src/engine/state/local-store.js";
import * as v from "valibot";
import { RecordDocs } from "../../../src/engine/project-docs.js";
import { COMPACT_EVERY, compactRecord, KEEP_VERSIONS, readRecord, updateRecord, writeRecord } from "../../../src/engine/state/record.js";
import type { StateStore } from "../../../src/engine/state/store.js";
import { s3Available, s3TestStore } from "../../helpers/s3-state.js";

const stores: [string, () => Promise<StateStore>][] = [["local", async () => new LocalStateStore(mkdtempSync(path.join(tmpdir(), "record-")))]];
if (s3Available()) stores.push(["s3", s3TestStore]);

describe.each(stores)("records on a %s store", (_kind, make) => {
  it("the newest version is the value; a write after a version another writer made first is refused", async () => {
    const store = await make();
    expect(await readRecord(store, "catalog")).toBeNull();
    expect(await writeRecord(store, "catalog", 0, "a")).toBe(true);
    expect(await writeRecord(store, "catalog", 0, "b")).toBe(false);
    expect(await readRecord(store, "catalog")).toMatchObject({ version: 1, body: "a" });
    expect(await writeRecord(store, "catalog", 1, "c")).toBe(true);
    expect(await readRecord(store, "catalog")).toMatchObject({ version: 2, body: "c" });
  });

  it("a reader that knows a version lists from it, and reads it again when there is none newer", async () => {
    const store = await make();
    await writeRecord(store, "p", 0, "one");
    const first = await readRecord(store, "p");
    expect(await readRecord(store, "p", first ?? undefined)).toEqual(first);
    await writeRecord(store, "p", 1, "two");
    expect(await readRecord(store, "p", first ?? undefined)).toMatchObject({ version: 2, body: "two" });
  });

  it("concurrent changes each land once: 12 increments from 12 writers make 12", async () => {
    const store = await make();
    const increment = (body: string | null) => String(Number(body ?? "0") + 1);
    await Promise.all(Array.from({ length: 12 }, () => updateRecord(store, "counter", increment, 100)));
    expect(await readRecord(store, "counter")).toMatchObject({ version: 12, body: "12" });
  });

  it("a change that returns null writes nothing", async () => {
    const store = await make();
    await updateRecord(store, "r", () => "x");
    expect(await updateRecord(store, "r", () => null)).toMatchObject({ version: 1, body: "x" });
    expect(await store.list("r")).toEqual(["000000000001"]);
  });
});

describe("compaction", () => {
  it("a record written through RecordDocs keeps at most COMPACT_EVERY + KEEP_VERSIONS versions, and its value", async () => {
    const store = new LocalStateStore(mkdtempSync(path.join(tmpdir(), "compact-")));
    const docs = new RecordDocs(store, "s3://b/p");
    for (let i = 1; i <= 2 * COMPACT_EVERY + 5; i++) await docs.write("progress/idx_a.json", { n: i });
    const versions = await store.list("progress/idx_a.json");
    expect(versions.length).toBeLessThanOrEqual(COMPACT_EVERY + KEEP_VERSIONS);
    // (the newest KEEP_VERSIONS before the compaction are kept: a damaged newest version can be removed by hand)
    expect(versions[0]).toBe(String(2 * COMPACT_EVERY - KEEP_VERSIONS + 1).padStart(12, "0"));
    expect(versions.at(-1)).toBe(String(2 * COMPACT_EVERY + 5).padStart(12, "0"));
    const read = await new RecordDocs(store, "s3://b/p").read("progress/idx_a.json", v.object({ n: v.number() }));
    expect(read).toMatchObject({ ok: true, value: { n: 2 * COMPACT_EVERY + 5 } });
  });

  it("compactRecord removes a long history a page at a time, never the newest versions", async () => {
    const store = new LocalStateStore(mkdtempSync(path.join(tmpdir(), "compact-long-")));
    for (let version = 0; version < 1_500; version++) await writeRecord(store, "r", version, String(version + 1));
    expect(await compactRecord(store, "r", 1_500)).toBe(1_000);
    expect(await compactRecord(store, "r", 1_500)).toBe(1_500 - KEEP_VERSIONS - 1_000);
    expect(await store.list("r")).toHaveLength(KEEP_VERSIONS);
    expect(await readRecord(store, "r")).toMatchObject({ version: 1_500, body: "1500" });
  });
});

describe("a record with a long history", () => {
  it("is read by listing about a page, not every version since the first", async () => {
    const inner = new LocalStateStore(mkdtempSync(path.join(tmpdir(), "history-")));
    const listings: number[] = [];
    const store: StateStore = Object.assign(Object.create(inner) as StateStore, {
      list: async (folder: string, after?: string, limit?: number) => {
        const names = await inner.list(folder, after, limit);
        listings.push(names.length);
        return names;
      },
    });
    // 3,456 versions (written straight into the folder: the store makes each with create-if-absent)
    for (let version = 1; version <= 3456; version++) expect(await inner.createIfAbsent(`progress/${String(version).padStart(12, "0")}`, `{"v":${version}}`)).toBe(true);
    await inner.createIfAbsent("progress/zz-not-a-version", "x");
    const newest = await readRecord(store, "progress");
    expect(newest).toMatchObject({ version: 3456, body: '{"v":3456}' });
    expect(Math.max(...listings)).toBeLessThanOrEqual(1001);
    expect(listings.length).toBeLessThan(12);
  });
});
