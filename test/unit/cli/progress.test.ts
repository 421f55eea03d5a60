/** The build's progress line: a rate from what moved lately, an ETA only when known, the phase. */
import { describe, expect, it } from "vitest";
import { buildLine, formatDuration, RateWindow } from "../../../src/cli/progress.js";

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

  it("writes durations for people", () => {
    expect([formatDuration(0.2), formatDuration(59), formatDuration(61), formatDuration(7384)]).toEqual(["1s", "59s", "1m 1s", "2h 3m"]);
  });
});
