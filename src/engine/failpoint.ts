/**
 * Crash points for tests: with `SEMSEARCH_FAILPOINT=<name>` (or `<name>@<n>`, the n-th time) a
 * process kills itself with SIGKILL when it reaches that point, as a power cut or `kill -9` would,
 * so tests can stop a write at every step and check that nothing is lost or left half-done.
 * `<name>:throw` throws an error there instead, as a failing disk would; `<name>:pause` stops the
 * process there for 3 seconds, so a test can change something under it at a known moment.
 */
const wanted = process.env.SEMSEARCH_FAILPOINT;
const hits = new Map<string, number>();

export function failpoint(name: string): void {
  if (wanted === undefined || !wanted.startsWith(name)) return;
  if (wanted === `${name}:throw`) throw Object.assign(new Error(`failpoint ${name}: no space left on device`), { code: "ENOSPC" });
  if (wanted === `${name}:pause`) return void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3000);
  const count = (hits.get(name) ?? 0) + 1;
  hits.set(name, count);
  if (wanted === name || wanted === `${name}@${count}`) process.kill(process.pid, "SIGKILL");
}
