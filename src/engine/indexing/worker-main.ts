/** Entry of the detached worker process: `node worker-main.js <project dir>`. */
import { EngineContext } from "../context.js";
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
  log(`worker failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
} finally {
  await ctx.close();
  log(`worker exiting, peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
}
