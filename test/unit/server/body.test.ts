/** Request bodies read within a limit, and received whole to temporary files before their add. */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { stat } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { RequestRefusedError } from "../../../src/engine/index.js";
import { connect } from "node:net";
import { serve } from "@hono/node-server";
import { bodyCompleteness, limitedStream } from "../../../src/server/body.js";
import { BodySpool } from "../../../src/server/spool.js";
import { tempDir } from "../../helpers/temp.js";

/** A POST whose body sends `chunks`, then either ends or fails as a connection cut by the client does. */
function post(chunks: string[], end: "end" | "cut", headers: Record<string, string> = {}): Request {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      if (end === "end") controller.close();
      else controller.error(Object.assign(new Error("aborted"), { code: "ECONNRESET" }));
    },
  });
  return new Request("http://127.0.0.1/v1/objects", { method: "POST", body, headers, duplex: "half" } as RequestInit);
}

async function read(stream: AsyncIterable<Buffer>): Promise<string> {
  let text = "";
  for await (const chunk of stream) text += chunk.toString();
  return text;
}

async function refusal(promise: Promise<unknown>): Promise<RequestRefusedError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RequestRefusedError);
  return error as RequestRefusedError;
}

/** Every callback queued now has run (setImmediate comes after every tick and promise queued before it). */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe("limitedStream", () => {
  it("reads a body within its limit", async () => {
    expect(await read(limitedStream(post(["ab", "cd"], "end"), 4))).toBe("abcd");
  });

  it("fails with 413 once the body passes its limit", async () => {
    const error = await refusal(read(limitedStream(post(["ab", "cd", "e"], "end"), 4)));
    expect([error.status, error.code, error.headers.connection]).toEqual([413, "BODY_TOO_LARGE", "close"]);
  });

  it("refuses a declared length over the limit before reading", () => {
    expect(() => limitedStream(post(["abcde"], "end", { "content-length": "5" }), 4)).toThrow(/larger than/);
  });

  it("fails a body cut by its client only when it is read, with 499: nothing can fail before a reader listens", async () => {
    // Before the fix, the stream was fed at once and destroyed with an error while nothing
    // listened (an add queued at the write gate, or the engine still loading): the process ended.
    const stream = limitedStream(post(["{}\n"], "cut"), 100);
    await settled();
    const error = await refusal(read(stream));
    expect([error.status, error.code]).toEqual([499, "CLIENT_CLOSED"]);
  });
});

describe("bodyCompleteness", () => {
  it("tells a body read after its client dropped the upload (its stream then ends as if whole) from a whole one", async () => {
    // Node's IncomingMessage, destroyed before anyone listened for its error, reads as empty and
    // ended: the parser's `complete` is what says the message never arrived.
    const outcomes: string[] = [];
    const server = serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: async (request: Request, env: unknown) => {
        await new Promise((resolve) => setTimeout(resolve, 150));
        try {
          outcomes.push(await read(limitedStream(request, 10_000, "hint", undefined, bodyCompleteness(env))));
        } catch (error) {
          outcomes.push(String((error as RequestRefusedError).status));
        }
        return new Response("ok");
      },
    });
    await new Promise((resolve) => server.once("listening", resolve));
    const { port } = server.address() as { port: number };
    try {
      for (const end of ["drop", "whole"]) {
        const socket = connect(port, "127.0.0.1");
        socket.on("error", () => {});
        socket.write("POST /v1/objects HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n");
        if (end === "whole") socket.write("0\r\n\r\n");
        else setTimeout(() => socket.destroy(), 20);
        await new Promise((resolve) => (end === "whole" ? socket.once("data", resolve) : socket.once("close", resolve)));
        socket.destroy();
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(outcomes).toEqual(["499", "hello"]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("BodySpool", () => {
  it("receives a body to a private file, removed by release", async () => {
    const parent = tempDir();
    const spool = new BodySpool({ maxBytes: 1000, parent });
    const received = await spool.receive(post(['{"id":"a"}\n', '{"id":"b"}\n'], "end"), 100);
    expect(readFileSync(received.path, "utf8")).toBe('{"id":"a"}\n{"id":"b"}\n');
    expect(received.bytes).toBe(22);
    expect(spool.heldBytes()).toBe(22);
    received.release();
    received.release();
    expect(existsSync(received.path)).toBe(false);
    expect(spool.heldBytes()).toBe(0);
    spool.close();
    expect(readdirSync(parent)).toEqual([]);
  });

  it.each([
    ["a body over the limit", post(["x".repeat(60), "x".repeat(60)], "end"), 413, "BODY_TOO_LARGE"],
    ["a body cut by its client", post(["{}\n"], "cut"), 499, "CLIENT_CLOSED"],
  ])("fails %s and keeps no file", async (_name, request, status, code) => {
    const parent = tempDir();
    const spool = new BodySpool({ maxBytes: 1000, parent });
    const error = await refusal(spool.receive(request, 100));
    expect([error.status, error.code]).toEqual([status, code]);
    expect(spool.heldBytes()).toBe(0);
    const [dir] = readdirSync(parent);
    expect(readdirSync(path.join(parent, dir as string))).toEqual([]);
  });

  it("fails a body whose stream ended while its message was not complete (a dropped upload) and keeps no file", async () => {
    const parent = tempDir();
    const spool = new BodySpool({ maxBytes: 1000, parent });
    const error = await refusal(spool.receive(post(['{"id":"a"}\n'], "end"), 100, () => false));
    expect([error.status, error.code]).toEqual([499, "CLIENT_CLOSED"]);
    expect(spool.heldBytes()).toBe(0);
    expect(readdirSync(path.join(parent, readdirSync(parent)[0] as string))).toEqual([]);
    expect((await spool.receive(post(['{"id":"a"}\n'], "end"), 100, () => true)).bytes).toBe(11);
  });

  it("keeps no file of bodies cut before their file was open", async () => {
    // The file was opened by the write stream in the background: a body that failed at once was
    // removed before its file existed, which was then created and never removed (one per request).
    const parent = tempDir();
    const spool = new BodySpool({ maxBytes: 1000, parent });
    for (let i = 0; i < 50; i++) {
      const body = new ReadableStream<Uint8Array>({ pull: (controller) => controller.error(Object.assign(new Error("aborted"), { code: "ECONNRESET" })) });
      const request = new Request("http://127.0.0.1/v1/objects", { method: "POST", body, duplex: "half" } as RequestInit);
      expect((await refusal(spool.receive(request, 100))).status).toBe(499);
    }
    // every file operation queued before these has run on the thread pool
    const dir = path.join(parent, readdirSync(parent)[0] as string);
    for (let round = 0; round < 4; round++) await Promise.all(Array.from({ length: 8 }, () => stat(dir)));
    expect(readdirSync(dir)).toEqual([]);
    expect(spool.heldBytes()).toBe(0);
  });

  it("makes its directory again when it was removed (by a cleaner of the temporary directory)", async () => {
    const parent = tempDir();
    const spool = new BodySpool({ maxBytes: 1000, parent });
    (await spool.receive(post(["{}"], "end"), 100)).release();
    rmSync(path.join(parent, readdirSync(parent)[0] as string), { recursive: true });
    const again = await spool.receive(post(['{"id":"a"}'], "end"), 100);
    expect(readFileSync(again.path, "utf8")).toBe('{"id":"a"}');
    again.release();
  });

  it("answers 503 BUSY beyond the bytes it may hold, declared or received, and takes bodies again once released", async () => {
    const spool = new BodySpool({ maxBytes: 100, parent: tempDir() });
    const held = await spool.receive(post(["x".repeat(80)], "end"), 100);
    const declared = await refusal(spool.receive(post(["x".repeat(30)], "end", { "content-length": "30" }), 100));
    expect([declared.status, declared.code, declared.headers["Retry-After"]]).toEqual([503, "BUSY", "1"]);
    const streamed = await refusal(spool.receive(post(["x".repeat(10), "x".repeat(20)], "end"), 100));
    expect([streamed.status, streamed.code]).toEqual([503, "BUSY"]);
    expect(spool.heldBytes()).toBe(80);
    held.release();
    expect((await spool.receive(post(["x".repeat(30)], "end"), 100)).bytes).toBe(30);
  });

  it("answers 503 saying so when its temporary directory cannot be written", async () => {
    const spool = new BodySpool({ maxBytes: 100, parent: path.join(tempDir(), "missing") });
    const error = await spool.receive(post(["{}"], "end"), 100).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 503, code: "ENOENT", message: "The server cannot write request bodies to its temporary directory (ENOENT)" });
  });

  it("removes the directories of servers that were killed, and only theirs, when asked (a server asks at its start, before any body)", async () => {
    const parent = tempDir();
    const dead = path.join(parent, "semsearch-bodies-999999999-abc");
    const alive = path.join(parent, `semsearch-bodies-${process.ppid}-abc`);
    const other = path.join(parent, "semsearch-other-1-abc");
    for (const dir of [dead, alive, other]) mkdirSync(dir);
    const spool = new BodySpool({ maxBytes: 100, parent });
    (await spool.receive(post(["{}"], "end"), 100)).release();
    expect(existsSync(dead)).toBe(true); // an app that only makes a spool, or receives bodies, sweeps nothing
    spool.removeAbandoned();
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(alive)).toBe(true);
    expect(existsSync(other)).toBe(true);
  });
});
