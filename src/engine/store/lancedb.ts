/**
 * LanceDB's edge: the only importer of @lancedb/lancedb and apache-arrow (loaded once, on first use),
 * the types the rest of store/ takes from them, and the translation of a failed LanceDB call into a
 * SemsearchError (`wrap`). The tables themselves are objects-table.ts, index-tables.ts and
 * part-tables.ts; the store and its snapshots lance-store.ts and snapshot.ts.
 */
import { createRequire } from "node:module";
import { constants } from "node:os";
import { ConflictError, environmentError, InternalError, SemsearchError } from "../errors.js";
import { diskFault } from "./local-files.js";
import { isRemote } from "./where.js";

// LanceDB's Rust logger writes warnings straight to stderr; semsearch's stderr carries only its own messages.
if (!process.env.SEMSEARCH_DEBUG) process.env.LANCEDB_LOG = "off";

export type Connection = import("@lancedb/lancedb").Connection;
export type Table = import("@lancedb/lancedb").Table;
export type ArrowTable = import("apache-arrow").Table;
export type ArrowVector = import("apache-arrow").Vector;

/** LanceDB and the one copy of apache-arrow it uses. */
export interface Lance {
  lancedb: typeof import("@lancedb/lancedb");
  arrow: typeof import("apache-arrow");
}

let lance: Promise<Lance> | undefined;
/**
 * LanceDB (a CommonJS package) requires apache-arrow's CommonJS build; importing the ES module build
 * here as well would load arrow twice (about 130 files each, most of a no-model command's start-up)
 * and give two copies of its classes. The CommonJS build is required, so both use one copy.
 */
export function loadLance(): Promise<Lance> {
  lance ??= import("@lancedb/lancedb").then((lancedb) => ({
    lancedb,
    arrow: createRequire(import.meta.url)("apache-arrow") as typeof import("apache-arrow"),
  }));
  return lance;
}

/**
 * Why a LanceDB operation on `dir` failed, when the machine is the cause: the OS error code that
 * Rust's I/O errors carry in their text (`(os error 28)`), a nearly full disk, or a directory that
 * cannot be written (read-only file system, permissions; both read from the local file system).
 */
export function environmentFault(dir: string, error: unknown, what: string): SemsearchError | null {
  const subject = `${what.charAt(0).toUpperCase()}${what.slice(1)} failed in ${dir}`;
  const text = error instanceof Error ? error.message : String(error);
  const errno = /\(os error (\d+)\)/.exec(text)?.[1];
  const code = errno === undefined ? undefined : Object.entries(constants.errno).find(([, number]) => number === Number(errno))?.[0];
  const coded = code === undefined ? null : environmentError(Object.assign(new Error(text, { cause: error }), { code }), subject);
  return coded ?? (isRemote(dir) ? null : diskFault(dir, error, subject));
}

/**
 * Runs a LanceDB operation on the database in `dir`; a failure becomes a SemsearchError: the machine's
 * fault (a full disk…), else what `diagnose` finds (a damaged table), else InternalError STORAGE_ERROR.
 */
/** Lance's refusal of a commit based on a version older than a Restore: the fence of a lease taken over. */
const FENCED = /incompatible with concurrent transaction Restore/i;

export async function wrap<T>(dir: string, what: string, fn: () => Promise<T>, diagnose?: (error: unknown) => Promise<SemsearchError | null>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof SemsearchError) throw error;
    if (error instanceof Error && FENCED.test(error.message)) {
      // (a bucket project's writer whose lease another process took over: docs/design/object-storage.md)
      throw new ConflictError("FENCED", `${what}: another process took this project's writes over meanwhile, so this write was refused`, {
        hint: "The write was not applied: run the same command again.",
        cause: error,
      });
    }
    throw environmentFault(dir, error, what) ?? (await diagnose?.(error)) ?? new InternalError("STORAGE_ERROR", `${what}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
