/**
 * Cross-process locks as exclusive files holding the owner's pid. A lock whose owner
 * has died (kill -9, power loss) is detected and taken over.
 */
import { closeSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { ConflictError } from "./errors.js";

export type Release = () => void;

/** Whether a process with this pid exists. */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The pid recorded in a lock file, or null when there is none (or it is unreadable). */
export function lockOwner(file: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(file, "utf8"), 10);
    return Number.isInteger(pid) ? pid : null;
  } catch {
    return null;
  }
}

/** Takes the lock if it is free or its owner is dead; returns null when a live process holds it. */
export function tryLock(file: string): Release | null {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, "wx");
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return () => {
        if (lockOwner(file) === process.pid) unlinkSync(file);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const owner = lockOwner(file);
    if (owner !== null && processAlive(owner)) return null;
    if (owner === null) return null; // being written right now by its new owner
    // Stale: move it aside atomically so only one contender removes it.
    try {
      const aside = `${file}.stale.${process.pid}`;
      renameSync(file, aside);
      unlinkSync(aside);
    } catch {
      // another process took it over first
    }
  }
  return null;
}

/** Waits for the lock, polling; ConflictError LOCKED after `timeoutMs`. */
export async function acquireLock(file: string, timeoutMs = 120_000): Promise<Release> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
    const release = tryLock(file);
    if (release) return release;
    if (Date.now() > deadline) {
      throw new ConflictError("LOCKED", `The project is locked by process ${lockOwner(file) ?? "?"} (${file})`, {
        hint: "Wait for the other semsearch command to finish.",
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
