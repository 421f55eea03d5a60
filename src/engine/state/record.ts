/**
 * Versioned records: a value that changes (the catalog, an index's progress, the keys) kept as
 * numbered versions `<name>/<version>` in the state store, the newest being the value. A write makes
 * the next version with create-if-absent, so of two writers that read the same version one wins and
 * the other reads again (optimistic concurrency): no lock is needed, a writer that paused past
 * another's write cannot overwrite it, and no store needs conditional replacement.
 *
 * Old versions are removed by compactRecord, which keeps the newest KEEP_VERSIONS. A writer that
 * read version n and paused could create version n+1 again after it was removed: a write nobody
 * reads, which it would take for done. So only a record whose every write is checked against the
 * project's write lease afterwards may be compacted (a writer that paused through KEEP_VERSIONS
 * others' writes lost its lease, and says so); readers list only versions after the newest they know.
 */
import { ConflictError, EnvironmentError } from "../errors.js";
import type { StateStore } from "./store.js";

export interface RecordVersion {
  version: number;
  body: string;
  /** the store's time of the write */
  writtenAt: number;
}

const DIGITS = 12;
const VERSION = /^\d{12}$/;

const versionName = (version: number) => String(version).padStart(DIGITS, "0");
/** How many versions one listing returns (S3's page). */
const PAGE = 1000;

/**
 * The newest version of record `name`, or null when it has none; always read from the store (a
 * version removed by hand and made again holds a new body). `known`: a version read before, so that
 * the listing starts there (when it was removed since, the whole record is listed again).
 * EnvironmentError CORRUPT_PROJECT (RecordUnreadable) when the newest listed version cannot be read
 * twice in a row: something other than a record is at its key (a folder, say).
 */
export async function readRecord(store: StateStore, name: string, known?: RecordVersion): Promise<RecordVersion | null> {
  let gone: string | null = null;
  for (;;) {
    const newest = await newestVersion(store, name, known);
    if (newest === null) return null;
    const record = await store.get(`${name}/${newest}`);
    if (record !== null) return { version: Number(newest), body: record.body, writtenAt: record.writtenAt };
    if (gone === newest) throw new RecordUnreadable(`${store.where}/${name}/${newest}`);
    // (removed after it was listed: a newer one, or the one before, is the value now)
    gone = newest;
    known = undefined;
  }
}

/** A version of a record that is listed but cannot be read: something other than a record is at its key. */
export class RecordUnreadable extends EnvironmentError {
  constructor(readonly key: string) {
    super("CORRUPT_PROJECT", `The project record ${key} is listed but cannot be read: something other than a record is there (a folder, say)`, {
      hint: `Remove what is at ${key}: the version before it is then the record's value.`,
    });
  }
}

/** The name of the newest version of record `name` (starting the listing at `known`, when it is still there), or null. */
async function newestVersion(store: StateStore, name: string, known?: RecordVersion): Promise<string | null> {
  if (known !== undefined) {
    const listed = (await store.list(name, known.version > 1 ? versionName(known.version - 1) : undefined)).filter((entry) => VERSION.test(entry));
    if (listed[0] === versionName(known.version)) return listed.at(-1) as string;
  }
  // One page holds every version of most records; a longer history is searched (nearNewest).
  let listed = await store.list(name, undefined, PAGE);
  if (listed.length >= PAGE) listed = await store.list(name, versionName(await nearNewest(store, name)));
  return listed.filter((entry) => VERSION.test(entry)).at(-1) ?? null;
}

/**
 * A version at most a page below the newest of record `name`, which has more than a page of
 * versions, so that reading the newest lists one page, not every version since the first: whether a
 * version newer than v exists is asked with a listing of one name after v, doubling v, then halving
 * the interval (about 30 listings for a million versions). It depends on no version being removed
 * (see above) only for speed: "a version newer than v" holds or not whatever the gaps.
 */
async function nearNewest(store: StateStore, name: string): Promise<number> {
  const newerThan = async (version: number) => {
    const [first] = await store.list(name, versionName(version), 1);
    // (names that are not versions sort after every version: none of them counts)
    return first !== undefined && VERSION.test(first);
  };
  if (!(await newerThan(PAGE))) return 0;
  let low = PAGE; // a newer version exists
  let high = PAGE * 2;
  while (await newerThan(high)) [low, high] = [high, high * 2];
  while (high - low > PAGE) {
    const middle = Math.floor((low + high) / 2);
    if (await newerThan(middle)) low = middle;
    else high = middle;
  }
  return low;
}

/**
 * Versions a compaction keeps below the newest: a damaged newest version, removed by hand, leaves the
 * one before it as the value (deploy.md), and a reader that listed a few versions ago still finds them.
 */
export const KEEP_VERSIONS = 20;
/** A record is compacted when its version is a multiple of this (an amortised removal per write). */
export const COMPACT_EVERY = 100;

/**
 * Removes the versions of record `name` older than the newest KEEP_VERSIONS, given its newest
 * version, up to a page of them (a longer history is removed over the following compactions). Only
 * for records written under a lease (see the header).
 */
export async function compactRecord(store: StateStore, name: string, newest: number): Promise<number> {
  const old = (await store.list(name, undefined, PAGE)).filter((entry) => VERSION.test(entry) && Number(entry) <= newest - KEEP_VERSIONS);
  for (let at = 0; at < old.length; at += 16) await Promise.all(old.slice(at, at + 16).map((entry) => store.remove(`${name}/${entry}`)));
  return old.length;
}

/**
 * Writes `body` as the version after `after` (0 for a record with none); false when another writer
 * made that version first (then read again and decide again).
 */
export async function writeRecord(store: StateStore, name: string, after: number, body: string): Promise<boolean> {
  return store.createIfAbsent(`${name}/${versionName(after + 1)}`, body);
}

/**
 * Changes record `name`: `change` gets the newest body (null when none) and returns the new one, or
 * null to write nothing. Run again on the newer body when another writer wins a race, up to
 * `attempts` times (ConflictError RECORD_BUSY after that). `change` must be a pure function of the
 * body it is given, since it may run more than once.
 */
export async function updateRecord(store: StateStore, name: string, change: (body: string | null) => string | null, attempts = 20): Promise<RecordVersion | null> {
  let current: RecordVersion | null = null;
  for (let attempt = 0; attempt < attempts; attempt++) {
    current = await readRecord(store, name, current ?? undefined);
    const body = change(current?.body ?? null);
    if (body === null) return current;
    if (await writeRecord(store, name, current?.version ?? 0, body)) {
      return { version: (current?.version ?? 0) + 1, body, writtenAt: await store.now() };
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(200, 5 * 2 ** attempt) * Math.random()));
  }
  throw new ConflictError("RECORD_BUSY", `The record ${name} in ${store.where} was changed by others ${attempts} times in a row while this process tried to change it`, {
    hint: "Too many processes change it at once; try again.",
  });
}
