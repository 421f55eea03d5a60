/** `semsearch worker` (the indexer in the foreground) and `semsearch worker status`. */
import { integerIn, type WorkerStatus } from "../../engine/index.js";
import { withEngine, type GlobalOptions } from "../options.js";
import { printResult } from "../output.js";

function describe(status: WorkerStatus): string {
  if (!status.running) return "No worker running.\n";
  const state = status.state;
  if (!state) return `Worker running (pid ${status.pid}${status.host ? ` on ${status.host}` : ""}).\n`;
  const what = state.phase === "indexing" ? `indexing ${state.index}: ${state.pending.toLocaleString("en-US")} objects pending` : state.phase === "optimizing" ? `optimizing ${state.index ?? "the object table"}` : "idle";
  const log = state.foreground ? "on its standard error (a foreground worker)" : status.log;
  return `Worker running (pid ${status.pid}${status.host ? ` on ${status.host}` : ""}): ${what}; ${state.indexed.toLocaleString("en-US")} objects indexed since ${state.started_at} (${state.rate}/s).\nLog: ${log}\n`;
}

export async function workerStatus(options: GlobalOptions): Promise<void> {
  await withEngine(options, async (engine) => {
    const status = await engine.workerStatus();
    printResult(options, status, () => describe(status));
  });
}

export interface WorkerRunOptions extends GlobalOptions {
  pollMs?: number;
}

/**
 * Runs the worker in this process until SIGTERM or SIGINT (for systemd or a container): one log line
 * per event on stderr (a service's log, whatever stdout is), nothing on stdout. The first signal lets
 * the batch in progress commit, then exits 0; a second one exits at once (the next writer rolls back
 * what was cut off).
 */
export async function workerRun(options: WorkerRunOptions): Promise<void> {
  const pollMs = integerIn("--poll-ms", options.pollMs, 1000, 50, 600_000);
  const stop = new AbortController();
  const log = (message: string) => process.stderr.write(`${new Date().toISOString()} [${process.pid}] ${message}\n`);
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop.signal.aborted) {
      log(`stopped at once (${signal})`);
      process.exit(signal === "SIGINT" ? 130 : 143);
    }
    log(`stopping (${signal}): the batch in progress commits first`);
    stop.abort();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  try {
    await withEngine(options, (engine) => engine.runWorker({ signal: stop.signal, pollMs, log }));
    log("worker stopped");
  } finally {
    process.removeListener("SIGTERM", onSignal);
    process.removeListener("SIGINT", onSignal);
  }
}
