/** `semsearch worker status`. */
import { withEngine, type GlobalOptions } from "../options.js";
import { printResult } from "../output.js";

export async function workerStatus(options: GlobalOptions): Promise<void> {
  await withEngine(options, async (engine) => {
    const status = engine.workerStatus();
    printResult(options, status, () => (status.running ? `Worker running (pid ${status.pid}).\n` : "No worker running.\n"));
  });
}
