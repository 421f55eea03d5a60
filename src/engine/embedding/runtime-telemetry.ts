/**
 * onnxruntime-node 1.30 starts Microsoft's telemetry client (1DS) when it creates its environment, at
 * the first model session of a process. That client writes `$TMPDIR/mat-debug-<pid>.log` and `.ses`,
 * a device id and an event database under `~/.cache/Microsoft/DeveloperTools/.onnxruntime/`, holds an
 * upload endpoint, and reads `/proc/self/cmdline` into a match that recurses once per character: a
 * command-line argument of about 29 KB (17.5 KB when the session is made in a thread, whose stack is
 * smaller) overflows the stack and the process dies of SIGSEGV. `ORT_DISABLE_TELEMETRY=1` in the
 * environment when the runtime starts turns the client off before any of that.
 *
 * The runtime reads the process's real environment. Only the main thread's `process.env` writes
 * reach it (a worker thread's `process.env` is a copy), so the main thread sets the variable before
 * it loads a runtime or starts a thread that may; a thread only checks that it was set.
 */
import { isMainThread } from "node:worker_threads";
import { InternalError } from "../errors.js";

export const TELEMETRY_VARIABLE = "ORT_DISABLE_TELEMETRY";

/** Call before loading onnxruntime (directly or through transformers.js) and before starting a thread that may. */
export function disableRuntimeTelemetry(): void {
  if (isMainThread) process.env[TELEMETRY_VARIABLE] = "1";
  else if (process.env[TELEMETRY_VARIABLE] !== "1") {
    throw new InternalError("RUNTIME_TELEMETRY_ON", "a thread was about to load onnxruntime with its telemetry on: the thread that started it must call disableRuntimeTelemetry() first");
  }
}
