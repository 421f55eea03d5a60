/**
 * Crash points for tests: with `SEMSEARCH_FAILPOINT=<name>` (or `<name>@<n>`, the n-th time) a
 * process kills itself with SIGKILL when it reaches that point, as a power cut or `kill -9` would,
 * so tests can stop a write at every step and check that nothing is lost or left half-done.
 */
const wanted = process.env.SEMSEARCH_FAILPOINT;
const hits = new Map<string, number>();

export function failpoint(name: string): void {
  if (wanted === undefined || !wanted.startsWith(name)) return;
  const count = (hits.get(name) ?? 0) + 1;
  hits.set(name, count);
  if (wanted === name || wanted === `${name}@${count}`) process.kill(process.pid, "SIGKILL");
}
