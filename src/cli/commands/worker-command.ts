/** `semsearch worker` (the indexer in the foreground) and `semsearch worker status`. */
import { integerIn, type WorkerStatus } from "../../engine/index.js";
import { withEngine, type GlobalOptions } from "../options.js";
import { printResult } from "../output.js";
import { statusCounts } from "../render/table.js";

/**
 * The worker and the indexes it has left, each with the counts `index status` shows (not the
 * worker's own tally, which counts what it went through, not what a search finds).
 */
function describe(status: WorkerStatus): string {
  const who = `pid ${status.pid}${status.host ? ` on ${status.host}` : ""}`;
  const state = status.state;
  let head = "No worker running.";
  if (status.running && !state) head = `Worker running (${who}).`;
  else if (state) {
    const what = state.phase === "indexing" ? `indexing ${state.index}` : state.phase === "optimizing" ? `optimizing ${state.index ?? "the object table"}` : "idle";
    head = `Worker running (${who}): ${what}; ${state.rate} objects/s since ${state.started_at}.`;
  }
  const indexes = status.indexes.map((index) => `  ${index.id}${index.name !== undefined ? ` (${index.name})` : ""}: ${statusCounts(index.status)}`);
  const log = status.running ? [`Log: ${state?.foreground ? "on its standard error (a foreground worker)" : status.log}`] : [];
  return `${[head, ...indexes, ...log].join("\n")}\n`;
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
