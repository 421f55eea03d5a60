import { describe, expect, it } from "vitest";
import { Gate } from "../../../src/server/gate.js";
import { loggedPath } from "../../../src/server/app.js";

describe("Gate", () => {
  it("runs at most maxActive at once, queues maxWaiting, refuses the rest with 503", async () => {
    const gate = new Gate(2, 1);
    let running = 0;
    let peak = 0;
    const releases: (() => void)[] = [];
    const task = () =>
      gate.run(async () => {
        peak = Math.max(peak, ++running);
        await new Promise<void>((resolve) => releases.push(resolve));
        running--;
        return "done";
      });
    const accepted = [task(), task(), task()];
    await expect(task()).rejects.toMatchObject({ status: 503, code: "BUSY", headers: { "Retry-After": "1" } });
    while (releases.length < 2) await new Promise((resolve) => setTimeout(resolve, 1));
    releases.splice(0).forEach((release) => release());
    while (releases.length < 1) await new Promise((resolve) => setTimeout(resolve, 1));
    releases.splice(0).forEach((release) => release());
    expect(await Promise.all(accepted)).toEqual(["done", "done", "done"]);
    expect(peak).toBe(2);
    // everything freed: two run at once again
    const again = [task(), task()];
    while (releases.length < 2) await new Promise((resolve) => setTimeout(resolve, 1));
    releases.splice(0).forEach((release) => release());
    expect(await Promise.all(again)).toEqual(["done", "done"]);
  });

  it("frees its place when the work fails", async () => {
    const gate = new Gate(1, 0);
    await expect(gate.run(async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await gate.run(async () => 1)).toBe(1);
  });
});

describe("loggedPath", () => {
  it.each([
    ["http://h/v1/indexes/idx_a/search?query=secret%20words&limit=5", "/v1/indexes/idx_a/search?query&limit"],
    ["http://h/v1/objects", "/v1/objects"],
    ["http://h/healthz?a=1&a=2&b", "/healthz?a&b"],
    ["http://h/x?%0Aname=1", "/x?%0Aname"],
  ])("%s → %s", (url, logged) => {
    expect(loggedPath(new URL(url))).toBe(logged);
  });
});
