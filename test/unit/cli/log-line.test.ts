/** A server's log lines, for collectors and for people (log-line.ts). */
import { describe, expect, it } from "vitest";
import { formatLogLine, logFormat } from "../../../src/cli/log-line.js";
import { UsageError } from "../../../src/engine/errors.js";

const at = new Date(2026, 10, 27, 9, 5, 7);

describe("formatLogLine", () => {
  it("writes one JSON object per line, its time first", () => {
    expect(formatLogLine({ level: "info", event: "listening", url: "http://127.0.0.1:8080" }, "json", at)).toBe(`{"time":"${at.toISOString()}","level":"info","event":"listening","url":"http://127.0.0.1:8080"}\n`);
  });

  it("writes a short line for people: the time, the level unless info, what happened, the rest as name=value", () => {
    expect(formatLogLine({ level: "info", event: "listening", url: "http://127.0.0.1:8080", auth: "keys" }, "human", at)).toBe("09:05:07 listening url=http://127.0.0.1:8080 auth=keys\n");
    expect(formatLogLine({ level: "info", method: "GET", path: "/v1/indexes", status: 200, ms: 3.2, key: "key_ab" }, "human", at)).toBe("09:05:07 GET /v1/indexes 200 3.2 ms key=key_ab\n");
    expect(formatLogLine({ level: "warning", event: "not warmed up", message: "the catalog is damaged" }, "human", at)).toBe("09:05:07 warning not warmed up the catalog is damaged\n");
    expect(formatLogLine({ level: "error", code: "X", message: "boom", stack: "Error: boom\n    at f" }, "human", at)).toBe("09:05:07 error boom code=X\nError: boom\n    at f\n");
    expect(formatLogLine({ event: "warm", ms: 812, reason: "a b" }, "human", at)).toBe('09:05:07 warm ms=812 reason="a b"\n');
  });
});

describe("logFormat", () => {
  it("is human at a terminal and JSON elsewhere, unless asked", () => {
    expect(logFormat(undefined, true)).toBe("human");
    expect(logFormat(undefined, false)).toBe("json");
    expect(logFormat("json", true)).toBe("json");
    expect(logFormat("human", false)).toBe("human");
    expect(() => logFormat("xml", false)).toThrow(UsageError);
  });
});
