/**
 * Cross-process locks as files naming their owner. A lock file is created whole or not at all:
 * its content is written to a temporary file first and then hard-linked into place (link fails
 * if the lock exists), so a crash or a full disk never leaves an empty or half-written lock. The
 * owner is recorded with its start time (see owner.ts), so a lock whose process died, or whose
 * pid now belongs to another process, is recognised as stale and taken over.
 */
import { randomBytes } from "node:crypto";
import { closeSync, linkSync, lstatSync, openSync, readFileSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { ConflictError, EnvironmentError, fsError } from "./errors.js";
import { currentOwner, ownerAlive, parseOwner, type Owner } from "./owner.js";

export type Release = () => void;

/** What a lock file says about its holder. */
export interface LockInfo extends Owner {
  /** what the holder runs, for messages (`semsearch objects add big.jsonl`) */
  command?: string;
  /** when it took the lock (ISO 8601) */
  since?: string;
}

interface LockFile extends LockInfo {
  /** distinguishes two acquisitions by one process */
  nonce: string;
}

/** An unreadable lock younger than this may be one being created on a file system without hard links. */
const UNREADABLE_GRACE_MS = 10_000;

function describeCommand(): string {
  const args = process.argv.slice(2).map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : JSON.stringify(arg)));
  return ["semsearch", ...args].join(" ").slice(0, 200);
}

/** The lock file's content and inode; null when there is no lock file; `info: null` when it is unreadable. */
function readLock(file: string): { info: LockFile | null; ino: number; ageMs: number; writtenAt: number } | null {
  let text: string;
  let ino: number;
  let ageMs: number;
  let writtenAt: number;
  try {
    const stat = lstatSync(file);
    ino = stat.ino;
    if (stat.isDirectory()) {
      throw new EnvironmentError("EISDIR", `The lock ${file} is a directory`, { hint: "Something put a directory where semsearch keeps a lock file: move it away." });
    }
    // Not a file this code made (a symbolic link, a device): no owner, and stale at once.
    if (!stat.isFile()) return { info: null, ino, ageMs: Infinity, writtenAt: stat.mtimeMs };
    writtenAt = stat.mtimeMs;
    ageMs = Date.now() - stat.mtimeMs;
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw fsError(error, "read the lock", file);
  }
  // An older version wrote the bare pid.
  let parsed: unknown = /^\d+\s*$/.test(text) ? { pid: Number(text) } : null;
  try {
    parsed ??= JSON.parse(text);
  } catch {
    // unreadable
  }
  const owner = parseOwner(parsed);
  if (!owner) return { info: null, ino, ageMs, writtenAt };
  const { command, since, nonce } = parsed as { command?: unknown; since?: unknown; nonce?: unknown };
  return {
    info: {
      ...owner,
      command: typeof command === "string" ? command : undefined,
      since: typeof since === "string" ? since : undefined,
      nonce: typeof nonce === "string" ? nonce : "",
    },
    ino,
    ageMs,
    writtenAt,
  };
}

/** The live holder of a lock, or null when it is free (absent, stale, or unreadable and old). */
export function lockHolder(file: string): LockInfo | null {
  const lock = readLock(file);
  if (!lock?.info || !ownerAlive(lock.info, lock.writtenAt)) return null;
  const { nonce: _nonce, ...info } = lock.info;
  return info;
}

/** Creates the lock file whole; false when it exists already. */
function create(file: string, content: string): boolean {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    writeFileSync(tmp, content, { flag: "wx" });
  } catch (error) {
    try {
      unlinkSync(tmp);
    } catch {
      // not created
    }
    throw fsError(error, "create the lock", file);
  }
  try {
    linkSync(tmp, file);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw fsError(error, "create the lock", file);
    return createWithoutLink(file, content);
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // already gone
    }
  }
}

/** For file systems without hard links: exclusive create, then write; a failed write removes the file. */
function createWithoutLink(file: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, "wx");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw fsError(error, "create the lock", file);
  }
  try {
    writeSync(fd, content);
  } catch (error) {
    closeSync(fd);
    unlinkSync(file);
    throw fsError(error, "create the lock", file);
  }
  closeSync(fd);
  return true;
}

/**
 * Removes a stale lock file, if it is still the one judged stale. Takeovers are serialised by a
 * second lock (`<file>.takeover`, held for a few system calls): only its holder removes the lock,
 * after reading it again, so two contenders can never both remove a lock and create their own.
 * False when another process is taking over right now.
 */
function removeStale(file: string, stale: { ino: number }): boolean {
  const mutex = `${file}.takeover`;
  const token = `${JSON.stringify(currentOwner())}\n`;
  if (!create(mutex, token)) {
    // A takeover lock is held for microseconds: one this old was left by a process that died holding it.
    const left = readLock(mutex);
    if (left !== null && left.ageMs > UNREADABLE_GRACE_MS) unlinkQuietly(mutex);
    return false;
  }
  try {
    const again = readLock(file);
    if (again !== null && again.ino === stale.ino && !isHeld(again)) unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw fsError(error, "remove the stale lock", file);
  } finally {
    unlinkQuietly(mutex);
  }
  return true;
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // gone already
  }
}

/** Whether a lock file read by readLock counts as held: a live owner, or unreadable but young (being created). */
function isHeld(lock: { info: LockFile | null; ageMs: number; writtenAt: number }): boolean {
  return lock.info === null ? lock.ageMs < UNREADABLE_GRACE_MS : ownerAlive(lock.info, lock.writtenAt);
}

/** Takes the lock if it is free or stale; returns null when a live process holds it. */
export function tryLock(file: string): Release | null {
  const mine: LockFile = { ...currentOwner(), command: describeCommand(), since: new Date().toISOString(), nonce: randomBytes(8).toString("hex") };
  for (let attempt = 0; attempt < 4; attempt++) {
    if (create(file, JSON.stringify(mine) + "\n")) {
      return () => {
        try {
          if (readLock(file)?.info?.nonce === mine.nonce) unlinkSync(file);
        } catch {
          // a lock that cannot be removed now is stale once this process exits
        }
      };
    }
    const existing = readLock(file);
    if (existing === null) continue; // released meanwhile
    if (isHeld(existing) || !removeStale(file, existing)) return null;
  }
  return null;
}

/** A message naming who holds the lock. */
export function describeHolder(holder: LockInfo | null): string {
  if (!holder) return "another process";
  const since = holder.since ? `, since ${holder.since}` : "";
  return `process ${holder.pid}${holder.command ? ` (${holder.command}${since})` : since ? ` (${since.slice(2)})` : ""}`;
}

/** Waits for the lock, polling; ConflictError LOCKED after `timeoutMs`. */
export async function acquireLock(file: string, timeoutMs = 120_000): Promise<Release> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
    const release = tryLock(file);
    if (release) return release;
    if (Date.now() > deadline) {
      throw new ConflictError("LOCKED", `The project is locked by ${describeHolder(lockHolder(file))}: gave up after ${Math.round(timeoutMs / 1000)} s (${file})`, {
        hint: "Wait for the other semsearch command to finish, then try again.",
      });
    }
    await sleep(delay);
  }
}

export async function withLock<T>(file: string, fn: () => Promise<T>, timeoutMs?: number): Promise<T> {
  const release = await acquireLock(file, timeoutMs);
  try {
    return await fn();
  } finally {
    release();
  }
}
