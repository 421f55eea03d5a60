/** Progress on stderr: a bar while the engine builds, only when stderr is a terminal and --json is off. */
import type { AddProgress, BuildProgress, DownloadProgress } from "../engine/index.js";

export interface ProgressReporter {
  update(progress: BuildProgress): void;
  done(): void;
}

const SILENT: ProgressReporter = { update() {}, done() {} };

export function progressReporter(json: boolean | undefined, label: string): ProgressReporter {
  if (json || !process.stderr.isTTY) return SILENT;
  const started = Date.now();
  let shown = false;
  return {
    update({ done, total }) {
      const width = 24;
      const ratio = total > 0 ? done / total : 1;
      const filled = Math.round(ratio * width);
      const seconds = (Date.now() - started) / 1000;
      const rate = seconds > 0 ? done / seconds : 0;
      const eta = rate > 0 && done < total ? ` · ETA ${Math.ceil((total - done) / rate)}s` : "";
      const bar = "█".repeat(filled) + "░".repeat(width - filled);
      process.stderr.write(`\r${label} [${bar}] ${done}/${total} objects · ${rate.toFixed(1)}/s${eta}\x1b[K`);
      shown = true;
    },
    done() {
      if (shown) process.stderr.write("\n");
    },
  };
}

/** Progress of `objects add` on stderr: objects read, then a bar of objects written. */
export function addProgressReporter(json: boolean | undefined): { update(progress: AddProgress): void; done(): void } {
  if (json || !process.stderr.isTTY) return { update() {}, done() {} };
  const writing = progressReporter(json, "writing");
  let reading = false;
  return {
    update(progress) {
      if (progress.phase === "reading") {
        reading = true;
        process.stderr.write(`\rreading: ${progress.done.toLocaleString("en-US")} objects checked\x1b[K`);
        return;
      }
      if (reading) process.stderr.write("\n");
      reading = false;
      writing.update({ indexId: "objects", done: progress.done, total: progress.total ?? progress.done });
    },
    done() {
      if (reading) process.stderr.write("\n");
      writing.done();
    },
  };
}

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0)} MB`;
}

/** A bar of bytes downloaded, on stderr, only when stderr is a terminal and --json is off. */
export function downloadProgressReporter(json: boolean | undefined, label: string): { update(progress: DownloadProgress): void; done(): void } {
  if (json || !process.stderr.isTTY) return { update() {}, done() {} };
  const started = Date.now();
  let shown = false;
  let last = 0;
  return {
    update({ done, total }) {
      const now = Date.now();
      if (now - last < 100 && done < total) return;
      last = now;
      const width = 24;
      const filled = Math.round((total > 0 ? done / total : 1) * width);
      const seconds = (now - started) / 1000;
      const rate = seconds > 0 ? done / seconds : 0;
      process.stderr.write(`\r${label} [${"█".repeat(filled)}${"░".repeat(width - filled)}] ${megabytes(done)}/${megabytes(total)} · ${megabytes(rate)}/s\x1b[K`);
      shown = true;
    },
    done() {
      if (shown) process.stderr.write("\n");
      shown = false;
    },
  };
}
