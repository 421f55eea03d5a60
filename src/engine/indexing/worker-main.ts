/** Entry of the detached worker process: `node worker-main.js <project dir>`. */
import { EngineContext } from "../context.js";
import { SemsearchError } from "../errors.js";
import { Project } from "../project.js";
import { runWorker } from "./worker.js";

const dir = process.argv[2];
if (!dir) {
  process.stderr.write("usage: worker-main.js <project dir>\n");
  process.exit(2);
}

const log = (message: string) => process.stdout.write(`${new Date().toISOString()} [${process.pid}] ${message}\n`);
const ctx = new EngineContext(new Project(dir));
try {
  await runWorker(ctx, log);
} catch (error) {
  // One line that `--wait` reads back (indexes.ts lastWorkerFailure), then the stack for people.
  const what = error instanceof SemsearchError ? `[${error.name} ${error.code}]` : "[InternalError INTERNAL]";
  log(`worker failed ${what}: ${(error instanceof Error ? error.message : String(error)).split("\n")[0]}`);
  if (error instanceof Error && error.stack) log(error.stack);
  process.exitCode = 1;
} finally {
  await ctx.close();
  log(`worker exiting, peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
}
