/** Progress on stderr: a bar while the engine builds, only when stderr is a terminal and --json is off. */
import type { AddProgress, BuildProgress, DownloadProgress } from "../engine/index.js";

export interface ProgressReporter {
  update(progress: BuildProgress): void;
  done(): void;
}

const SILENT: ProgressReporter = { update() {}, done() {} };

const BAR_WIDTH = 24;

/** A bar of BAR_WIDTH cells, filled to `ratio`. */
function bar(ratio: number): string {
  const filled = Math.round(Math.min(1, Math.max(0, ratio)) * BAR_WIDTH);
  return "█".repeat(filled) + "░".repeat(BAR_WIDTH - filled);
}

/** Bytes for people: `0.2 MB`, `91 MB`, `1.4 GB`. */
export function formatBytes(bytes: number): string {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(1)} GB` : `${(bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0)} MB`;
}

export function progressReporter(json: boolean | undefined, label: string): ProgressReporter {
  if (json || !process.stderr.isTTY) return SILENT;
  const started = Date.now();
  let shown = false;
  return {
    update({ done, total }) {
      const seconds = (Date.now() - started) / 1000;
      const rate = seconds > 0 ? done / seconds : 0;
      const eta = rate > 0 && done < total ? ` · ETA ${Math.ceil((total - done) / rate)}s` : "";
      process.stderr.write(`\r${label} [${bar(total > 0 ? done / total : 1)}] ${done}/${total} objects · ${rate.toFixed(1)}/s${eta}\x1b[K`);
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
      const seconds = (now - started) / 1000;
      const rate = seconds > 0 ? done / seconds : 0;
      process.stderr.write(`\r${label} [${bar(total > 0 ? done / total : 1)}] ${formatBytes(done)}/${formatBytes(total)} · ${formatBytes(rate)}/s\x1b[K`);
      shown = true;
    },
    done() {
      if (shown) process.stderr.write("\n");
      shown = false;
    },
  };
}
