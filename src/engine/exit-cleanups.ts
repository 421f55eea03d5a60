/**
 * Work that must finish before a process that ends early exits: a command's embedding threads are
 * stopped only when idle, since onnxruntime aborts the process when a thread is stopped inside it.
 * The CLI runs these before `process.exit` (a reader closed the pipe); ending normally, it closes its
 * engine instead. No dependencies: the CLI's entry imports it.
 */
const cleanups = new Set<() => Promise<void>>();

/** Registers `cleanup`; the returned function unregisters it. */
export function onEarlyExit(cleanup: () => Promise<void>): () => void {
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

/** Runs every registered cleanup (failures ignored); then the process may exit. */
export async function beforeEarlyExit(): Promise<void> {
  await Promise.allSettled([...cleanups].map((cleanup) => cleanup()));
}
