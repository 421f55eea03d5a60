/**
 * Which process owns a lock, a journal or a spooled file, recorded so that it cannot be mistaken
 * for another process later: a pid alone is reused (after a reboot, or once the pid space wraps),
 * so on Linux the owner also records the boot id and its start time in clock ticks since boot
 * (`/proc/<pid>/stat`, field 22). Where /proc is missing (macOS, Windows) only the pid is compared.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

export interface Owner {
  pid: number;
  /** `<boot id>:<start ticks>` on Linux; absent where it cannot be read */
  start?: string;
}

function readText(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

/** Fields 3 on of `/proc/<pid>/stat`, or null where there is no such file. */
function procStat(pid: number): string[] | null {
  const stat = readText(`/proc/${pid}/stat`);
  // The command name (field 2) is in parentheses and may hold spaces and parentheses: count after the last ")".
  return stat === null ? null : stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** The start mark of a running process, or null when this platform (or the process) does not tell. */
export function processStart(pid: number): string | null {
  const fields = procStat(pid);
  const boot = readText("/proc/sys/kernel/random/boot_id");
  if (fields === null || boot === null) return null;
  const ticks = fields[19]; // field 22 of the whole line: starttime
  return ticks === undefined || !/^\d+$/.test(ticks) ? null : `${boot.trim()}:${ticks}`;
}

/**
 * Whether a process with this pid exists and has not exited (a zombie, exited but not yet reaped by
 * its parent, holds nothing). It may be another process than the one that wrote the pid.
 */
export function processAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const state = procStat(pid)?.[0];
  return state !== "Z" && state !== "X";
}

let self: Owner | undefined;

/** This process, as an owner. */
export function currentOwner(): Owner {
  if (!self) {
    const start = processStart(process.pid);
    self = start === null ? { pid: process.pid } : { pid: process.pid, start };
  }
  return self;
}

/**
 * Whether a process runs Node.js, by its command name or its program's name (both readable for
 * every process); true where /proc cannot tell. Node 24 names its main thread "MainThread", which
 * is what the command name then shows.
 */
function runsNode(pid: number): boolean {
  const name = readText(`/proc/${pid}/comm`);
  if (name === null || /node/i.test(name)) return true;
  const program = readText(`/proc/${pid}/cmdline`)?.split("\0")[0] ?? "";
  return /node/i.test(program.slice(program.lastIndexOf("/") + 1));
}

/** When a process started (ms since the epoch), from /proc; null where that cannot be read. */
export function processStartedAt(pid: number): number | null {
  const ticks = Number(procStat(pid)?.[19]);
  const boot = /^btime (\d+)$/m.exec(readText("/proc/stat") ?? "")?.[1];
  // /proc reports times in USER_HZ, which Linux fixes at 100 per second for user space.
  return Number.isFinite(ticks) && boot !== undefined ? Number(boot) * 1000 + ticks * 10 : null;
}

/**
 * Whether the recorded owner is still running: its pid is alive and, where known, started when it
 * did. For an owner recorded without a start mark (an older version, or another platform),
 * `writtenAt` (when the record was written) rules out a process that started after it.
 */
export function ownerAlive(owner: Owner, writtenAt?: number): boolean {
  if (!processAlive(owner.pid)) return false;
  if (owner.start === undefined) {
    // Only a Node.js process (semsearch) can hold a semsearch lock: not init, not a shell.
    if (!runsNode(owner.pid)) return false;
    const startedAt = writtenAt === undefined ? null : processStartedAt(owner.pid);
    return startedAt === null || startedAt <= (writtenAt as number) + 2000; // the boot time is read to the second
  }
  const start = processStart(owner.pid);
  return start === null || start === owner.start;
}

export function sameOwner(a: Owner, b: Owner): boolean {
  return a.pid === b.pid && a.start === b.start;
}

/** Reads an owner written by `JSON.stringify(owner)` (extra keys allowed); null when the text is not one. */
export function parseOwner(value: unknown): Owner | null {
  if (typeof value !== "object" || value === null) return null;
  const { pid, start } = value as { pid?: unknown; start?: unknown };
  if (typeof pid !== "number" || !Number.isSafeInteger(pid) || pid <= 0) return null;
  if (start !== undefined && typeof start !== "string") return null;
  return start === undefined ? { pid } : { pid, start };
}

/** A short text naming an owner, for file names: `<pid>-<hash of its start mark>`. */
export function ownerTag(owner: Owner = currentOwner()): string {
  return `${owner.pid}-${owner.start === undefined ? "0" : createHash("sha256").update(owner.start).digest("hex").slice(0, 10)}`;
}

/** Whether the owner a tag names is still running (false for text that is not a tag). */
export function tagAlive(tag: string): boolean {
  const match = /^(\d+)-([0-9a-f]+)$/.exec(tag);
  if (!match) return false;
  const pid = Number(match[1]);
  if (!processAlive(pid)) return false;
  const start = processStart(pid);
  return match[2] === "0" || start === null || ownerTag({ pid, start }) === tag;
}
