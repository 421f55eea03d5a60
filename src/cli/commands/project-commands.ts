/** `semsearch project copy <from> <to>`: a whole project, between local directories and buckets. */
import { Engine, isBucketAddress, namedProjectDir, projectAddress, type CopyProgress } from "../../engine/index.js";
import type { GlobalOptions } from "../options.js";
import { printResult, warn } from "../output.js";
import { formatBytes } from "../progress.js";

/** Files and bytes copied, on stderr: only when stderr is a terminal and --json is off. */
function copyProgress(json: boolean | undefined): { update(progress: CopyProgress): void; done(): void } {
  if (json || !process.stderr.isTTY) return { update() {}, done() {} };
  let shown = false;
  return {
    update({ done, total, bytes }) {
      process.stderr.write(`\rcopying: ${done}/${total} files · ${formatBytes(bytes)}\x1b[K`);
      shown = true;
    },
    done() {
      if (shown) process.stderr.write("\n");
      shown = false;
    },
  };
}

export async function projectCopy(from: string, to: string, options: GlobalOptions): Promise<void> {
  // (the source as --project reads it: a folder holding .semsearch means that project)
  const source = projectAddress(from);
  const engine = new Engine({ projectDir: isBucketAddress(source) ? source : namedProjectDir(source), onWarning: (warning) => warn(options, warning), oneShot: true });
  const target = projectAddress(to);
  const progress = copyProgress(options.json);
  try {
    const copied = await engine.copyProject(target, { onProgress: (p) => progress.update(p) });
    progress.done();
    printResult(options, copied, () => `Copied ${copied.from} to ${copied.to}: ${copied.indexes} ${copied.indexes === 1 ? "index" : "indexes"}, ${copied.files} files, ${formatBytes(copied.bytes)}.\n`);
  } finally {
    progress.done();
    await engine.close();
  }
}
