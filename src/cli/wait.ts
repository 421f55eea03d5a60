/** `--wait`: a progress bar until an index is built, then what went wrong, if anything, on stderr. */
import { integerIn, type Engine, type IndexInfo } from "../engine/index.js";
import type { GlobalOptions } from "./options.js";
import { warn } from "./output.js";
import { progressReporter } from "./progress.js";

/** Exit code of a `--wait` whose index finished with objects in the ERROR state (the output is still printed). */
export const EXIT_OBJECTS_FAILED = 7;

export interface WaitFlags {
  wait?: boolean;
  /** seconds */
  timeout?: number;
}

/**
 * Waits for an index with a progress bar (stderr, terminals only), then warns about objects that
 * could not be indexed (the first reasons; exit code 7 once the command has printed its result) and
 * objects with no searchable text (with field names no stored object has, a likely typo).
 */
export async function waitForBuild(engine: Engine, id: string, options: GlobalOptions & WaitFlags): Promise<IndexInfo> {
  const progress = progressReporter(options.json, id);
  // Ctrl+C stops the waiting, not the indexing: say so (the worker is a process of its own).
  const interrupted = () => {
    progress.done();
    const message = `Stopped waiting; ${id} goes on being built in the background (\`semsearch index status ${id} --wait\` to watch it again).`;
    process.stderr.write(options.json ? `${JSON.stringify({ warnings: [{ code: "WAIT_INTERRUPTED", message }] })}\n` : `${message}\n`);
    process.exit(130);
  };
  process.once("SIGINT", interrupted);
  let info: IndexInfo;
  try {
    const timeoutMs = integerIn("timeout", options.timeout, 0, 1, 31 * 24 * 3600) * 1000 || undefined;
    info = await engine.waitForIndex(id, { onProgress: (p) => progress.update(p), timeoutMs });
  } finally {
    process.removeListener("SIGINT", interrupted);
    progress.done();
  }
  const report = await engine.buildReport(id);
  const { status } = info;
  if (report.errors.count > 0) {
    const first = report.errors.first.map((error) => `\n  ${error.id}: ${error.message}`).join("");
    const more = report.errors.count > report.errors.first.length ? `\n  … and ${report.errors.count - report.errors.first.length} more` : "";
    warn(options, {
      code: "OBJECTS_FAILED",
      message: `${id}: ${report.errors.count.toLocaleString("en-US")} object${report.errors.count === 1 ? "" : "s"} could not be indexed (READY ${status.READY} · ERROR ${status.ERROR}):${first}${more}\nFix and add them again; \`semsearch objects get <id>\` shows an object's reason.`,
    });
    process.exitCode = EXIT_OBJECTS_FAILED;
  }
  // Some objects without searchable text are normal (a field left out); none with any is a misconfiguration.
  if (status.READY > 0 && report.withoutText >= status.READY) {
    warn(options, {
      code: "NO_SEARCHABLE_TEXT",
      message: `${id}: none of the ${status.READY.toLocaleString("en-US")} indexed objects has searchable text, so search cannot tell them apart.${report.missingFields ? ` ${report.missingFields}` : ""}`,
    });
  }
  return info;
}
