/**
 * An embedding thread started before its model is known, by a command that will embed a query (the
 * CLI's `search`, from bin/semsearch, before its own modules load). A thread takes some 40 ms to
 * start and its modules 20 more: started here, that happens on the other core while the CLI's
 * modules load, instead of after them (`npm run bench:cold`). The first thread pool of the process
 * takes it (pool.ts) and tells it its model; until then it loads nothing, so it can be stopped at
 * any time, and it never keeps the process alive. Its imports are kept few, so that importing it
 * costs next to nothing.
 */
import { Worker } from "node:worker_threads";
import { disableRuntimeTelemetry } from "./runtime-telemetry.js";

let early: Worker | undefined;

/** Starts the thread (once); it waits for the message `{ init }` that names its model. */
export function startEarlyThread(): void {
  if (early) return;
  disableRuntimeTelemetry(); // (a thread's environment is copied when it starts)
  const worker = new Worker(new URL("./embed-thread.js", import.meta.url), { workerData: { model: null } });
  worker.unref();
  // (a thread that failed or ended is not handed out: the pool starts one of its own)
  const drop = () => {
    if (early === worker) early = undefined;
  };
  worker.on("error", drop);
  worker.on("exit", drop);
  early = worker;
}

/** The early thread, for a pool to adopt (then to be sent `{ init }` and referenced), at most once. */
export function takeEarlyThread(): Worker | undefined {
  const worker = early;
  early = undefined;
  return worker;
}

/** Stops the early thread when no model will be loaded here (a running server answers the search). */
export function stopEarlyThread(): void {
  void takeEarlyThread()?.terminate();
}
