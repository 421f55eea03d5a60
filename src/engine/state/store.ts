/**
 * The port through which the project's control plane (leases now; the catalog, progress and keys
 * next) reads and writes its records: a flat store of small objects under `/`-separated keys, with
 * the one conditional write every object store offers, create-if-absent. Nothing relies on
 * conditional replacement or deletion (some S3-compatible stores ignore `If-Match` on DELETE), so the
 * same protocol runs on a local directory and on a bucket.
 */

/** A record as stored: its bytes and when the store wrote it (the store's clock, milliseconds). */
export interface StateObject {
  body: string;
  writtenAt: number;
}

export interface StateStore {
  /** Where the store is, for messages (a directory, or `s3://bucket/prefix`). */
  readonly where: string;
  /** The record under `key`, or null when there is none. */
  get(key: string): Promise<StateObject | null>;
  /** Writes `body` under `key` whole, unless a record is there: false then, and nothing is written. */
  createIfAbsent(key: string, body: string): Promise<boolean>;
  /**
   * The names of the records directly under the folder `key` (no `/` in them), in byte order; only
   * those after `after` when given, and only the first `limit` when given.
   */
  list(folder: string, after?: string, limit?: number): Promise<string[]>;
  /** Removes the record under `key`, if any. */
  remove(key: string): Promise<void>;
  /** The store's clock now, in milliseconds (the clock its `writtenAt` times are on). */
  now(): Promise<number>;
}

/** A key's parts: letters, digits, `.`, `_` and `-`, not starting with a dot (names a store keeps as they are everywhere). */
const PART = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

/** Checks a key (or a folder, with `folder`); throws on one the code should never make. */
export function checkKey(key: string, folder = false): void {
  const parts = key.split("/");
  if ((!folder || key !== "") && !parts.every((part) => PART.test(part))) throw new Error(`not a state key: ${JSON.stringify(key)}`);
}
