/** The server's limits, in process over loopback: header size, slow clients, stopping. */
import { existsSync, mkdirSync } from "node:fs";
import { connect, type Socket } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine } from "../../../src/engine/index.js";
import { isLoopback, startServer, type RunningServer } from "../../../src/server/serve.js";
import { BodySpool } from "../../../src/server/spool.js";
import { waitUntil } from "../../helpers/serve.js";
import { tempDir } from "../../helpers/temp.js";

let server: RunningServer;

beforeAll(async () => {
  const engine = new Engine({ projectDir: path.join(tempDir(), "p") });
  server = await startServer(engine, { host: "127.0.0.1", port: 0, checkKey: null, maxHeaderBytes: 2048, headersTimeoutMs: 1000, requestTimeoutMs: 2000 });
});

afterAll(async () => {
  await server.stop();
});

/** Writes raw bytes and resolves with what the server answers before it closes (or after `waitMs`). */
function raw(text: string, waitMs = 8000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(server.port, "127.0.0.1");
    let answer = "";
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(answer);
    }, waitMs);
    socket.on("data", (chunk) => (answer += chunk));
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(answer);
    });
    socket.on("error", () => {});
    socket.write(text);
  });
}

describe("startServer", () => {
  it("listens on loopback and answers", async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ status: "ok" });
  });

  it("answers 431 to headers over the limit", async () => {
    const response = await fetch(`${server.url}/healthz`, { headers: { "x-big": "a".repeat(4096) } });
    expect(response.status).toBe(431);
  });

  it("closes on a client that never finishes its headers", async () => {
    const started = Date.now();
    const answer = await raw("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(Date.now() - started).toBeLessThan(7000);
  });

  it("closes on a client that never finishes its body", async () => {
    const answer = await raw("POST /v1/objects HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n[");
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("closes whole the connections of clients that never finish their headers, never read and never close", async () => {
    // Before the fix the 408 only half-closed them: each kept its descriptor until its client closed.
    const statuses: number[] = [];
    const own = await startServer(new Engine({ projectDir: path.join(tempDir(), "p") }), { host: "127.0.0.1", port: 0, checkKey: null, headersTimeoutMs: 500, onRequest: (entry) => statuses.push(entry.status) });
    const clients = Array.from({ length: 5 }, () => {
      const socket = connect(own.port, "127.0.0.1");
      socket.on("error", () => {});
      socket.pause(); // never reads
      socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
      return socket;
    });
    try {
      await waitUntil(async () => (await own.connections()) === 5, "the five connections");
      await waitUntil(() => statuses.length === 5, "five answers");
      expect(statuses).toEqual([408, 408, 408, 408, 408]);
      await waitUntil(async () => (await own.connections()) === 0, "the server to close the five connections");
      // The answer was sent before the close: a client reading later still finds it.
      const first = clients[0] as Socket;
      first.resume();
      const answer = await new Promise<string>((resolve) => {
        let text = "";
        first.on("data", (chunk) => (text += chunk));
        first.on("close", () => resolve(text));
      });
      expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n[^]*"code":"REQUEST_TIMEOUT"/);
    } finally {
      for (const socket of clients) socket.destroy();
      await own.stop();
    }
  });

  it.each([
    ["127.0.0.1", true],
    ["127.1.2.3", true],
    ["::1", true],
    ["localhost", true],
    ["0.0.0.0", false],
    ["192.168.1.2", false],
    ["::", false],
  ])("isLoopback(%s) is %s", (host, loopback) => {
    expect(isLoopback(host)).toBe(loopback);
  });
});

describe("bodies' directories", () => {
  it("a server removes what killed servers left in the temporary directory when it starts", async () => {
    const parent = tempDir();
    const dead = path.join(parent, "semsearch-bodies-999999999-abc");
    mkdirSync(dead);
    const engine = new Engine({ projectDir: path.join(tempDir(), "p") });
    const started = await startServer(engine, { host: "127.0.0.1", port: 0, checkKey: null, bodySpool: new BodySpool({ maxBytes: 1000, parent }) });
    try {
      expect(existsSync(dead)).toBe(false);
    } finally {
      await started.stop();
    }
  });
});
