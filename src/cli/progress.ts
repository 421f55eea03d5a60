/**
 * Progress on stderr, never with --json: on a terminal, a bar redrawn in place; elsewhere (a pipe, a
 * file, a CI log) a plain line every 30 s (PlainProgress).
 */
import { ValidationError, type AddProgress, type BuildProgress, type DownloadProgress } from "../engine/index.js";
import { statusCounts } from "./render/table.js";

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

/** What the worker is doing, after a build's counts: embedding, or building the search indexes once every object is through. */
function buildPhase({ done, total, phase }: BuildProgress): string {
  return phase === "optimizing" || (done >= total && total > 0) ? " · building the search indexes" : phase === "indexing" ? " · embedding" : "";
}

/** ` · 12/s · ETA 3m 5s`: the rate once it is known, and the time left at that rate. */
function rateAndEta({ done, total }: BuildProgress, rate: number | null): string {
  const speed = rate === null ? "" : ` · ${rate >= 10 ? Math.round(rate) : rate.toFixed(1)}/s`;
  const eta = rate !== null && done < total ? ` · ETA ${formatDuration((total - done) / rate)}` : "";
  return speed + eta;
}

/**
 * The line of a build's progress on a terminal: a bar of the objects it is over for (READY or ERROR),
 * the objects a search finds (READY) of all, those that failed, the rate over the last half minute
 * and an ETA when it is known, and the phase.
 */
export function buildLine(label: string, progress: BuildProgress, rate: number | null): string {
  const { done, total, status } = progress;
  const count = (n: number) => n.toLocaleString("en-US");
  const counts = status ? `${count(status.READY)}/${count(total)} objects searchable${status.ERROR > 0 ? ` · ${count(status.ERROR)} failed` : ""}` : `${count(done)}/${count(total)} objects`;
  return `${label} [${bar(total > 0 ? done / total : 1)}] ${counts}${rateAndEta(progress, rate)}${buildPhase(progress)}`;
}

/** The plain line of a build's progress (not a terminal): the counts as `index status` prints them, the rate, ETA and phase. */
export function plainBuildLine(label: string, progress: BuildProgress, rate: number | null): string {
  const { done, total, status } = progress;
  const counts = status ? statusCounts(status) : `${done.toLocaleString("en-US")}/${total.toLocaleString("en-US")} objects`;
  return `${label}: ${counts}${rateAndEta(progress, rate)}${buildPhase(progress)}`;
}

/** Where progress is written: stderr, or a stream a test gives. */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** How often a plain progress line is written where stderr is no terminal, by default: 30 s. */
export const PLAIN_PROGRESS_INTERVAL_MS = 30_000;

/** The plain lines' interval: SEMSEARCH_PROGRESS_INTERVAL_MS (for tests, 10 ms to a day), else 30 s; ValidationError when it is not such a number. */
export function plainProgressInterval(env: NodeJS.ProcessEnv = process.env): number {
  const given = env.SEMSEARCH_PROGRESS_INTERVAL_MS;
  if (given === undefined || given === "") return PLAIN_PROGRESS_INTERVAL_MS;
  const ms = /^\d{1,9}$/.test(given) ? Number(given) : Number.NaN;
  if (!(ms >= 10 && ms <= 86_400_000)) {
    throw new ValidationError("INVALID_PARAMETER", `SEMSEARCH_PROGRESS_INTERVAL_MS must be an integer from 10 to 86,400,000 (milliseconds), got ${JSON.stringify(given)}`, {
      issues: [{ path: "SEMSEARCH_PROGRESS_INTERVAL_MS", message: "must be an integer from 10 to 86,400,000" }],
    });
  }
  return ms;
}

/**
 * A progress line where stderr is no terminal (a pipe, a file, a CI log): the latest line, whole
 * (no `\r`, no colours), every `intervalMs`, so a long command shows it is alive without filling
 * the log; nothing before the first interval is over.
 */
export class PlainProgress {
  private latest: string | null = null;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly stream: ProgressStream, intervalMs: number) {
    this.timer = setInterval(() => {
      if (this.latest !== null) this.stream.write(`${this.latest}\n`);
    }, intervalMs);
    this.timer.unref(); // (it never keeps a command from ending)
  }

  set(line: string): void {
    this.latest = line;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** Where a reporter writes: a terminal (lines redrawn in place), plain lines now and then, or nothing (--json). */
function progressMode(json: boolean | undefined, stream: ProgressStream): "tty" | "plain" | "off" {
  return json ? "off" : stream.isTTY ? "tty" : "plain";
}

export interface ReporterOptions {
  /** default: process.stderr */
  stream?: ProgressStream;
  /** of the plain lines; default: plainProgressInterval() */
  intervalMs?: number;
}

/**
 * A build's progress on stderr: a bar redrawn in place on a terminal; elsewhere a plain line every
 * 30 s (plainBuildLine); nothing with --json.
 */
export function progressReporter(json: boolean | undefined, label: string, options: ReporterOptions = {}): ProgressReporter {
  const stream = options.stream ?? process.stderr;
  const mode = progressMode(json, stream);
  if (mode === "off") return SILENT;
  const window = new RateWindow();
  if (mode === "plain") {
    const plain = new PlainProgress(stream, options.intervalMs ?? plainProgressInterval());
    return {
      update: (progress) => plain.set(plainBuildLine(label, progress, window.add(Date.now(), progress.done))),
      done: () => plain.stop(),
    };
  }
  let shown = false;
  return {
    update(progress) {
      const rate = window.add(Date.now(), progress.done);
      stream.write(`\r${buildLine(label, progress, rate)}\x1b[K`);
      shown = true;
    },
    done() {
      if (shown) stream.write("\n");
    },
  };
}

/** The plain line of an add: objects read so far, then objects written of all. */
function plainAddLine(progress: AddProgress): string {
  const count = (n: number) => n.toLocaleString("en-US");
  return progress.phase === "reading" ? `reading: ${count(progress.done)} objects checked` : `writing: ${count(progress.done)}/${count(progress.total ?? progress.done)} objects`;
}

/** Progress of `objects add` on stderr: objects read, then a bar of objects written (a plain line every 30 s where stderr is no terminal). */
export function addProgressReporter(json: boolean | undefined, options: ReporterOptions = {}): { update(progress: AddProgress): void; done(): void } {
  const stream = options.stream ?? process.stderr;
  const mode = progressMode(json, stream);
  if (mode === "off") return SILENT_ADD;
  if (mode === "plain") {
    const plain = new PlainProgress(stream, options.intervalMs ?? plainProgressInterval());
    return { update: (progress) => plain.set(plainAddLine(progress)), done: () => plain.stop() };
  }
  const writing = progressReporter(json, "writing", { stream });
  let reading = false;
  return {
    update(progress) {
      if (progress.phase === "reading") {
        reading = true;
        stream.write(`\r${plainAddLine(progress)}\x1b[K`);
        return;
      }
      if (reading) stream.write("\n");
      reading = false;
      writing.update({ indexId: "objects", done: progress.done, total: progress.total ?? progress.done });
    },
    done() {
      if (reading) stream.write("\n");
      writing.done();
    },
  };
}

const SILENT_ADD = { update() {}, done() {} };

/** A bar of bytes downloaded on stderr (a plain line every 30 s where stderr is no terminal). */
export function downloadProgressReporter(json: boolean | undefined, label: string, options: ReporterOptions = {}): { update(progress: DownloadProgress): void; done(): void } {
  const stream = options.stream ?? process.stderr;
  const mode = progressMode(json, stream);
  if (mode === "off") return { update() {}, done() {} };
  if (mode === "plain") {
    const plain = new PlainProgress(stream, options.intervalMs ?? plainProgressInterval());
    return { update: ({ done, total }) => plain.set(`${label}: ${formatBytes(done)}/${formatBytes(total)}`), done: () => plain.stop() };
  }
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
      stream.write(`\r${label} [${bar(total > 0 ? done / total : 1)}] ${formatBytes(done)}/${formatBytes(total)} · ${formatBytes(rate)}/s\x1b[K`);
      shown = true;
    },
    done() {
      if (shown) stream.write("\n");
      shown = false;
    },
  };
}

/** Progress of `objects add <folder>` on stderr: a bar of the files found that are done (added, unchanged or skipped). */
export function filesProgressReporter(json: boolean | undefined, options: ReporterOptions = {}): { update(done: number, total: number): void; done(): void } {
  const stream = options.stream ?? process.stderr;
  const mode = progressMode(json, stream);
  if (mode === "off") return { update() {}, done() {} };
  if (mode === "plain") {
    const plain = new PlainProgress(stream, options.intervalMs ?? plainProgressInterval());
    return { update: (done, total) => plain.set(`files: ${done.toLocaleString("en-US")}/${total.toLocaleString("en-US")}`), done: () => plain.stop() };
  }
  let shown = false;
  let last = 0;
  return {
    update(done, total) {
      const now = Date.now();
      if (now - last < 100 && done < total) return;
      last = now;
      stream.write(`\rfiles [${bar(total > 0 ? done / total : 1)}] ${done.toLocaleString("en-US")}/${total.toLocaleString("en-US")}\x1b[K`);
      shown = true;
    },
    done() {
      if (shown) stream.write("\r\x1b[K");
    },
  };
}
