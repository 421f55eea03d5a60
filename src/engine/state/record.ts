/**
 * Versioned records: a value that changes (the catalog, an index's progress, the keys) kept as
 * numbered versions `<name>/<version>` in the state store, the newest being the value. A write makes
 * the next version with create-if-absent, so of two writers that read the same version one wins and
 * the other reads again (optimistic concurrency): no lock is needed, a writer that paused past
 * another's write cannot overwrite it, and no store needs conditional replacement.
 *
 * Versions are never removed here: a writer that read version n and paused could otherwise create
 * version n+1 again after it was removed, a write nobody reads that it would take for done. Records
 * that change often need a compaction that rules that out (docs/design/object-storage.md); readers
 * list only versions after the newest they know.
 */
import { ConflictError } from "../errors.js";
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
 * The newest version of record `name`, or null when it has none. `known`: a version read before, so
 * that only newer ones are listed (it is returned again when there is none newer).
 */
export async function readRecord(store: StateStore, name: string, known?: RecordVersion): Promise<RecordVersion | null> {
  let listed: string[];
  if (known !== undefined) listed = await store.list(name, versionName(known.version));
  else {
    // One page holds every version of most records; a longer history is searched (nearNewest).
    listed = await store.list(name, undefined, PAGE);
    if (listed.length >= PAGE) listed = await store.list(name, versionName(await nearNewest(store, name)));
  }
  const versions = listed.filter((entry) => VERSION.test(entry));
  const newest = versions.at(-1);
  if (newest === undefined) return known ?? null;
  const record = await store.get(`${name}/${newest}`);
  if (record === null) throw new ConflictError("RECORD_MISSING", `The record ${name} in ${store.where} lost its version ${Number(newest)} after listing it`, { hint: "Something removes the project's records: stop it, then try again." });
  return { version: Number(newest), body: record.body, writtenAt: record.writtenAt };
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
