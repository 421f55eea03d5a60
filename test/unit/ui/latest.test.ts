import { describe, expect, it } from "vitest";
import { Latest } from "../../../src/ui/latest.js";

describe("only the newest answer counts", () => {
  it("a new request cancels the one before, whose answer is then never current", () => {
    const latest = new Latest();
    const first = latest.begin();
    expect(first.current()).toBe(true);
    const second = latest.begin();
    expect(first.signal.aborted).toBe(true);
    expect(first.current()).toBe(false);
    expect(second.current()).toBe(true);
    latest.cancel();
    expect(second.signal.aborted).toBe(true);
    expect(second.current()).toBe(false);
    expect(latest.begin().current()).toBe(true);
  });
});
