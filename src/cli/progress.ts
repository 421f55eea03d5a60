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

/**
 * The rate of a count over the last `windowMs` (objects per second), from what was seen move: not
 * from the count at the start, which a reporter attached to a build half-way through would take for
 * its own work. Null until the count has moved within the window.
 */
export class RateWindow {
  private readonly samples: { at: number; done: number }[] = [];

  constructor(private readonly windowMs = 30_000) {}

  add(at: number, done: number): number | null {
    const last = this.samples.at(-1);
    if (last && done < last.done) this.samples.length = 0; // (counted again from less: a new build)
    this.samples.push({ at, done });
    while (this.samples.length > 2 && at - (this.samples[1] as { at: number }).at >= this.windowMs) this.samples.shift();
    const first = this.samples[0] as { at: number; done: number };
    const seconds = (at - first.at) / 1000;
    return seconds > 0 && done > first.done ? (done - first.done) / seconds : null;
  }
}

/** Seconds for people: `45s`, `12m 5s`, `2h 3m`. */
export function formatDuration(seconds: number): string {
  const s = Math.ceil(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

/** The line of a build's progress: objects, the rate over the last half minute and an ETA when it is known, and the phase. */
export function buildLine(label: string, { done, total, phase }: BuildProgress, rate: number | null): string {
  const speed = rate === null ? "" : ` · ${rate >= 10 ? Math.round(rate) : rate.toFixed(1)}/s`;
  const eta = rate !== null && done < total ? ` · ETA ${formatDuration((total - done) / rate)}` : "";
  const what = phase === "optimizing" || (done >= total && total > 0) ? " · building the search indexes" : phase === "indexing" ? " · embedding" : "";
  return `${label} [${bar(total > 0 ? done / total : 1)}] ${done.toLocaleString("en-US")}/${total.toLocaleString("en-US")} objects${speed}${eta}${what}`;
}

export function progressReporter(json: boolean | undefined, label: string): ProgressReporter {
  if (json || !process.stderr.isTTY) return SILENT;
  const window = new RateWindow();
  let shown = false;
  return {
    update(progress) {
      const rate = window.add(Date.now(), progress.done);
      process.stderr.write(`\r${buildLine(label, progress, rate)}\x1b[K`);
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

/** Progress of `objects add <folder>` on stderr: a bar of the files found that are done (added, unchanged or skipped). */
export function filesProgressReporter(json: boolean | undefined): { update(done: number, total: number): void; done(): void } {
  if (json || !process.stderr.isTTY) return { update() {}, done() {} };
  let shown = false;
  let last = 0;
  return {
    update(done, total) {
      const now = Date.now();
      if (now - last < 100 && done < total) return;
      last = now;
      process.stderr.write(`\rfiles [${bar(total > 0 ? done / total : 1)}] ${done.toLocaleString("en-US")}/${total.toLocaleString("en-US")}\x1b[K`);
      shown = true;
    },
    done() {
      if (shown) process.stderr.write("\r\x1b[K");
    },
  };
}
