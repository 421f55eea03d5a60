/**
 * Crash points for tests: with `SEMSEARCH_FAILPOINT=<name>` (or `<name>@<n>`, the n-th time) a
 * process kills itself with SIGKILL when it reaches that point, as a power cut or `kill -9` would,
 * so tests can stop a write at every step and check that nothing is lost or left half-done.
 * `<name>:throw` throws an error there instead, as a failing disk would; `<name>:pause` stops the
 * process there for 3 seconds, so a test can change something under it at a known moment.
 * `<name>@<n>:hold` stops it there (the n-th time) for as long as a test needs: it writes the file
 * SEMSEARCH_FAILPOINT_HOLD names (the point's name and its pid), the signal that it is held, and
 * goes on once the test deletes that file (or after 10 minutes, so a test that failed leaves no
 * process behind for long).
 */
import { existsSync, writeFileSync } from "node:fs";

const wanted = parse(process.env.SEMSEARCH_FAILPOINT);
const hits = new Map<string, number>();

/** `<name>[@<n>][:throw|:pause|:hold]`; names hold colons themselves (`worker:read`). */
function parse(value: string | undefined): { name: string; nth?: number; action: "kill" | "throw" | "pause" | "hold" } | null {
  if (value === undefined) return null;
  const match = /^(.+?)(?:@(\d+))?(?::(throw|pause|hold))?$/.exec(value);
  if (!match) return null;
  return { name: match[1] as string, ...(match[2] ? { nth: Number(match[2]) } : {}), action: (match[3] as "throw" | "pause" | "hold" | undefined) ?? "kill" };
}

/** The longest a `:hold` holds. */
const HOLD_MAX_MS = 10 * 60_000;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function hold(name: string): void {
  const file = process.env.SEMSEARCH_FAILPOINT_HOLD;
  if (!file) throw new Error(`failpoint ${name}:hold needs SEMSEARCH_FAILPOINT_HOLD, the file that holds it`);
  writeFileSync(file, `${name} ${process.pid}\n`);
  const deadline = Date.now() + HOLD_MAX_MS;
  while (existsSync(file) && Date.now() < deadline) sleepSync(50);
}

export function failpoint(name: string): void {
  if (wanted === null || wanted.name !== name) return;
  const count = (hits.get(name) ?? 0) + 1;
  hits.set(name, count);
  if (wanted.nth !== undefined && wanted.nth !== count) return;
  if (wanted.action === "throw") throw Object.assign(new Error(`failpoint ${name}: no space left on device`), { code: "ENOSPC" });
  if (wanted.action === "pause") return sleepSync(3000);
  if (wanted.action === "hold") return hold(name);
  process.kill(process.pid, "SIGKILL");
}
