/** The build's progress line: a rate from what moved lately, an ETA only when known, the phase. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { addProgressReporter, buildLine, filesProgressReporter, formatDuration, plainBuildLine, plainProgressInterval, progressReporter, RateWindow } from "../../../src/cli/progress.js";

describe("RateWindow", () => {
  it("counts only what moved while it watched: attached to a build half done, the rate is the build's, not the count's", () => {
    const window = new RateWindow(30_000);
    expect(window.add(0, 4000)).toBeNull(); // 4,000 done before it looked
    expect(window.add(1000, 4000)).toBeNull(); // nothing moved yet
    expect(window.add(11_000, 4018)).toBeCloseTo(1.64, 2); // 18 objects in 11 s
  });

  it("forgets what is older than its window", () => {
    const window = new RateWindow(10_000);
    window.add(0, 0);
    window.add(5000, 500); // fast at first
    window.add(15_000, 510);
    expect(window.add(25_000, 520)).toBeCloseTo(1, 5); // the last 20 s: 1/s
  });

  it("starts again when the count goes down (a new build)", () => {
    const window = new RateWindow();
    window.add(0, 100);
    window.add(1000, 200);
    expect(window.add(2000, 10)).toBeNull();
  });
});

describe("buildLine", () => {
  it("shows the rate and an ETA only once known, and names the phase", () => {
    expect(buildLine("idx", { indexId: "idx", done: 4000, total: 5183 }, null)).toBe("idx [███████████████████░░░░░] 4,000/5,183 objects");
    expect(buildLine("idx", { indexId: "idx", done: 4000, total: 5183, phase: "indexing" }, 1.8)).toBe("idx [███████████████████░░░░░] 4,000/5,183 objects · 1.8/s · ETA 10m 58s · embedding");
    expect(buildLine("idx", { indexId: "idx", done: 5183, total: 5183, phase: "optimizing" }, 25)).toBe("idx [████████████████████████] 5,183/5,183 objects · 25/s · building the search indexes");
  });

  it("with the index's counts: the objects a search finds of all, and those that failed", () => {
    const status = { UPLOADED: 1000, PROCESSING: 128, READY: 3800, ERROR: 255 };
    expect(buildLine("idx", { indexId: "idx", done: 4055, total: 5183, status, phase: "indexing" }, null)).toBe("idx [███████████████████░░░░░] 3,800/5,183 objects searchable · 255 failed · embedding");
    expect(plainBuildLine("idx", { indexId: "idx", done: 4055, total: 5183, status, phase: "indexing" }, 1.8)).toBe("idx: UPLOADED 1,000 · PROCESSING 128 · READY 3,800 · ERROR 255 · 1.8/s · ETA 10m 27s · embedding");
  });

  it("writes durations for people", () => {
    expect([formatDuration(0.2), formatDuration(59), formatDuration(61), formatDuration(7384)]).toEqual(["1s", "59s", "1m 1s", "2h 3m"]);
  });
});

/** A stream that keeps what is written, a terminal or not. */
function stream(isTTY: boolean) {
  const written: string[] = [];
  return { isTTY, written, write: (text: string) => void written.push(text) };
}

describe("progress where stderr is no terminal", () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it("a build: the latest plain line once per interval, nothing before the first, nothing after done", () => {
    const out = stream(false);
    const reporter = progressReporter(false, "idx_a", { stream: out, intervalMs: 1000 });
    reporter.update({ indexId: "idx_a", done: 128, total: 300, status: { UPLOADED: 44, PROCESSING: 128, READY: 128, ERROR: 0 } });
    vi.advanceTimersByTime(999);
    expect(out.written).toEqual([]);
    vi.advanceTimersByTime(1);
    reporter.update({ indexId: "idx_a", done: 256, total: 300, status: { UPLOADED: 0, PROCESSING: 44, READY: 255, ERROR: 1 } });
    vi.advanceTimersByTime(2000);
    reporter.done();
    vi.advanceTimersByTime(5000);
    expect(out.written).toEqual([
      "idx_a: UPLOADED 44 · PROCESSING 128 · READY 128 · ERROR 0\n",
      "idx_a: UPLOADED 0 · PROCESSING 44 · READY 255 · ERROR 1 · 128/s · ETA 1s\n", // (128 more in the 1 s between the updates)
      "idx_a: UPLOADED 0 · PROCESSING 44 · READY 255 · ERROR 1 · 128/s · ETA 1s\n",
    ]);
  });

  it("an add: objects read, then written; files: files done", () => {
    const out = stream(false);
    const add = addProgressReporter(false, { stream: out, intervalMs: 30_000 });
    add.update({ phase: "reading", done: 120_000 });
    vi.advanceTimersByTime(30_000);
    add.update({ phase: "writing", done: 50_000, total: 200_000 });
    vi.advanceTimersByTime(30_000);
    add.done();
    const files = filesProgressReporter(false, { stream: out, intervalMs: 30_000 });
    files.update(120, 400);
    vi.advanceTimersByTime(30_000);
    files.done();
    vi.advanceTimersByTime(60_000);
    expect(out.written).toEqual(["reading: 120,000 objects checked\n", "writing: 50,000/200,000 objects\n", "files: 120/400\n"]);
  });

  it("nothing with --json; on a terminal, the bar redrawn in place at each update", () => {
    const json = stream(false);
    const reporter = progressReporter(true, "idx_a", { stream: json, intervalMs: 10 });
    reporter.update({ indexId: "idx_a", done: 1, total: 2 });
    vi.advanceTimersByTime(1000);
    expect(json.written).toEqual([]);
    const tty = stream(true);
    const bar = progressReporter(false, "idx_a", { stream: tty, intervalMs: 10 });
    bar.update({ indexId: "idx_a", done: 1, total: 2 });
    bar.done();
    expect(tty.written).toEqual(["\ridx_a [████████████░░░░░░░░░░░░] 1/2 objects\x1b[K", "\n"]);
  });

  it.each([
    [undefined, 30_000],
    ["", 30_000],
    ["250", 250],
    ["86400000", 86_400_000],
  ])("SEMSEARCH_PROGRESS_INTERVAL_MS=%j is %d ms", (given, ms) => {
    expect(plainProgressInterval(given === undefined ? {} : { SEMSEARCH_PROGRESS_INTERVAL_MS: given })).toBe(ms);
  });

  it.each(["30s", "1e3", "-5", "5", "0x10", " 100", "86400001"])("SEMSEARCH_PROGRESS_INTERVAL_MS=%j is refused, quoted", (given) => {
    expect(() => plainProgressInterval({ SEMSEARCH_PROGRESS_INTERVAL_MS: given })).toThrow(`SEMSEARCH_PROGRESS_INTERVAL_MS must be an integer from 10 to 86,400,000 (milliseconds), got ${JSON.stringify(given)}`);
  });
});
