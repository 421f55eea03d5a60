/** `semsearch worker status`. */
import type { WorkerStatus } from "../../engine/index.js";
import { withEngine, type GlobalOptions } from "../options.js";
import { printResult } from "../output.js";

function describe(status: WorkerStatus): string {
  if (!status.running) return "No worker running.\n";
  const state = status.state;
  if (!state) return `Worker running (pid ${status.pid}).\n`;
  const what = state.phase === "indexing" ? `indexing ${state.index}: ${state.pending.toLocaleString("en-US")} objects pending` : state.phase === "optimizing" ? `optimizing ${state.index ?? "the object table"}` : "idle, about to exit";
  return `Worker running (pid ${status.pid}): ${what}; ${state.indexed.toLocaleString("en-US")} objects indexed since ${state.started_at} (${state.rate}/s).\nLog: ${status.log}\n`;
}

export async function workerStatus(options: GlobalOptions): Promise<void> {
  await withEngine(options, async (engine) => {
    const status = await engine.workerStatus();
    printResult(options, status, () => describe(status));
  });
}
