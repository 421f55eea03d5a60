/** The thumbnails' queue (images/thumbnail-queue.ts): lanes, caps per host, shared flights, callers that leave, failures remembered. */
import { describe, expect, it } from "vitest";
import { CancelledError, RequestRefusedError } from "../../../src/engine/errors.js";
import { FlightQueue, RecentFailures } from "../../../src/engine/images/thumbnail-queue.js";
import { DEFAULT_THUMBNAIL_TIMEOUT_MS, thumbnailTimeoutMs } from "../../../src/engine/images/thumbnail.js";

/** Tasks the test ends: each start is recorded with its key and signal, and ended by `finish(key, value)`. */
function tasks() {
  const started: { key: string; signal: AbortSignal; end: (value: string) => void }[] = [];
  return {
    started,
    keys: () => started.map((task) => task.key),
    task: (key: string) => (signal: AbortSignal) => new Promise<string>((resolve) => started.push({ key, signal, end: resolve })),
    finish(key: string, value = `made ${key}`) {
      const found = started.find((task) => task.key === key);
      if (!found) throw new Error(`${key} has not started`);
      found.end(value);
    },
  };
}

/** Lets the queue's promise callbacks run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

const LANES = { file: { active: 2, waiting: 3, what: "thumbnails of files" }, url: { active: 3, perGroup: 2, waiting: 3, what: "thumbnails of image URLs" } };

describe("FlightQueue", () => {
  it("runs at most `active` flights of a lane at once, first come first, and at most `perGroup` of one host", async () => {
    const queue = new FlightQueue<string>(LANES);
    const work = tasks();
    const results = ["a1", "a2", "a3", "b1"].map((key) => queue.run(key, { lane: "url", group: key[0] as string }, work.task(key)));
    await settle();
    // a3 waits for its host; b1, of another host, passes it
    expect(work.keys()).toEqual(["a1", "a2", "b1"]);
    expect(queue.load("url")).toEqual({ running: 3, waiting: 1 });
    work.finish("a1");
    await settle();
    expect(work.keys()).toEqual(["a1", "a2", "b1", "a3"]);
    for (const key of ["a2", "b1", "a3"]) work.finish(key);
    expect(await Promise.all(results)).toEqual(["made a1", "made a2", "made a3", "made b1"]);
    expect(queue.load("url")).toEqual({ running: 0, waiting: 0 });
  });

  it("keeps lanes apart: a full lane holds back none of another", async () => {
    const queue = new FlightQueue<string>(LANES);
    const work = tasks();
    for (const key of ["u1", "u2", "u3", "u4"]) void queue.run(key, { lane: "url", group: key }, work.task(key));
    const file = queue.run("f", { lane: "file" }, work.task("f"));
    await settle();
    expect(work.keys()).toEqual(["u1", "u2", "u3", "f"]);
    work.finish("f");
    expect(await file).toBe("made f");
  });

  it("makes identical requests once: a request for a key in flight or waiting joins it", async () => {
    const queue = new FlightQueue<string>(LANES);
    const work = tasks();
    const first = Array.from({ length: 5 }, () => queue.run("k", { lane: "file" }, work.task("k")));
    await settle();
    const joined = queue.run("k", { lane: "file" }, work.task("k"));
    work.finish("k");
    expect(await Promise.all([...first, joined])).toEqual(Array(6).fill("made k"));
    expect(work.keys()).toEqual(["k"]);
    // (done: the next request makes it again)
    const again = queue.run("k", { lane: "file" }, work.task("k"));
    await settle();
    expect(work.keys()).toEqual(["k", "k"]);
    (work.started[1] as { end: (value: string) => void }).end("again");
    expect(await again).toBe("again");
  });

  it("refuses a new flight (503 BUSY) when its lane has `waiting` waiting, but never a request that joins one", async () => {
    const queue = new FlightQueue<string>(LANES);
    const work = tasks();
    for (const key of ["f1", "f2", "f3", "f4", "f5"]) void queue.run(key, { lane: "file" }, work.task(key));
    const refused = await queue.run("f6", { lane: "file" }, work.task("f6")).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RequestRefusedError);
    expect(refused).toMatchObject({ status: 503, code: "BUSY", message: "The server is making 2 thumbnails of files and has 3 waiting: try again shortly", headers: { "Retry-After": "1" } });
    const joined = queue.run("f5", { lane: "file" }, work.task("f5"));
    for (const key of ["f1", "f2"]) work.finish(key);
    await settle();
    for (const key of ["f3", "f4"]) work.finish(key);
    await settle();
    work.finish("f5");
    expect(await joined).toBe("made f5");
  });

  it("lets a caller that has gone leave at once; a waiting flight no one waits for leaves the queue unmade", async () => {
    const queue = new FlightQueue<string>(LANES);
    const work = tasks();
    for (const key of ["f1", "f2"]) void queue.run(key, { lane: "file" }, work.task(key));
    const callers = [new AbortController(), new AbortController()];
    const waiting = callers.map((caller) => queue.run("w", { lane: "file", signal: caller.signal }, work.task("w")));
    for (const caller of callers) caller.abort();
    for (const left of waiting) await expect(left).rejects.toBeInstanceOf(CancelledError);
    expect(queue.load("file")).toEqual({ running: 2, waiting: 0 });
    work.finish("f1");
    work.finish("f2");
    await settle();
    expect(work.keys()).toEqual(["f1", "f2"]);
    // (a signal already aborted: not even queued)
    await expect(queue.run("x", { lane: "file", signal: AbortSignal.abort() }, work.task("x"))).rejects.toBeInstanceOf(CancelledError);
    expect(queue.load("file")).toEqual({ running: 0, waiting: 0 });
  });

  it("aborts a running flight when its last caller leaves, and only then; a caller without a signal keeps it", async () => {
    const queue = new FlightQueue<string>(LANES);
    const work = tasks();
    const callers = [new AbortController(), new AbortController()];
    const waits = callers.map((caller) => queue.run("k", { lane: "url", group: "h", signal: caller.signal }, work.task("k")));
    await settle();
    const signal = (work.started[0] as { signal: AbortSignal }).signal;
    (callers[0] as AbortController).abort();
    await expect(waits[0]).rejects.toBeInstanceOf(CancelledError);
    expect(signal.aborted).toBe(false);
    (callers[1] as AbortController).abort();
    await expect(waits[1]).rejects.toBeInstanceOf(CancelledError);
    expect(signal.aborted).toBe(true);
    // A request for the key now starts afresh rather than joining what is abandoned.
    const fresh = queue.run("k", { lane: "url", group: "h" }, work.task("k"));
    await settle();
    expect(work.keys()).toEqual(["k", "k"]);
    // …and, with no signal, is never abandoned, whoever else leaves.
    const leaving = new AbortController();
    const other = queue.run("k", { lane: "url", group: "h", signal: leaving.signal }, work.task("k"));
    leaving.abort();
    await expect(other).rejects.toBeInstanceOf(CancelledError);
    expect((work.started[1] as { signal: AbortSignal }).signal.aborted).toBe(false);
    work.finish("k");
    (work.started[1] as { end: (value: string) => void }).end("fresh");
    expect(await fresh).toBe("fresh");
  });

  it("frees an abandoned flight's place when its task ends, for the next waiting", async () => {
    const queue = new FlightQueue<string>({ file: { active: 1, waiting: 5, what: "thumbnails of files" } });
    const work = tasks();
    const caller = new AbortController();
    void queue.run("a", { lane: "file", signal: caller.signal }, work.task("a")).catch(() => {});
    const next = queue.run("b", { lane: "file" }, work.task("b"));
    await settle();
    caller.abort();
    await settle();
    // (the place is held until the aborted task ends: its work may not stop at once)
    expect(work.keys()).toEqual(["a"]);
    work.finish("a");
    await settle();
    expect(work.keys()).toEqual(["a", "b"]);
    work.finish("b");
    expect(await next).toBe("made b");
  });
});

describe("RecentFailures", () => {
  it("remembers a key for its time from its last failure, then forgets it", () => {
    let now = 1000;
    const failures = new RecentFailures(60_000, 10, () => now);
    failures.add("u");
    now += 59_999;
    expect(failures.has("u")).toBe(true);
    failures.add("u");
    now += 59_999;
    expect(failures.has("u")).toBe(true);
    now += 1;
    expect(failures.has("u")).toBe(false);
    expect(failures.size).toBe(0);
  });

  it("keeps at most its number of keys, forgetting the oldest first", () => {
    const failures = new RecentFailures(60_000, 3, () => 0);
    for (const key of ["a", "b", "c", "d"]) failures.add(key);
    expect(["a", "b", "c", "d"].map((key) => failures.has(key))).toEqual([false, true, true, true]);
    failures.add("b");
    failures.add("e");
    expect(["b", "c", "d", "e"].map((key) => failures.has(key))).toEqual([true, false, true, true]);
    expect(failures.size).toBe(3);
  });
});

describe("thumbnailTimeoutMs", () => {
  it.each([
    [undefined, DEFAULT_THUMBNAIL_TIMEOUT_MS],
    ["", DEFAULT_THUMBNAIL_TIMEOUT_MS],
    ["10", 10_000],
    ["0.5", 500],
    ["0", DEFAULT_THUMBNAIL_TIMEOUT_MS],
    ["-1", DEFAULT_THUMBNAIL_TIMEOUT_MS],
    ["1e3", DEFAULT_THUMBNAIL_TIMEOUT_MS],
    [" 5", DEFAULT_THUMBNAIL_TIMEOUT_MS],
    ["99999", 3_600_000],
  ])("SEMSEARCH_THUMBNAIL_TIMEOUT=%j: %d ms", (value, expected) => {
    expect(thumbnailTimeoutMs(value === undefined ? {} : { SEMSEARCH_THUMBNAIL_TIMEOUT: value })).toBe(expected);
  });
});
