import { createServer, type Server, type Socket } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { withReader } from "../../../src/cli/reader.js";
import { localSocketPath, prepareSocketDir } from "../../../src/engine/local-socket.js";
import { tempDir } from "../../helpers/temp.js";
import { within } from "../../helpers/wait.js";

let fake: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (fake ? fake.close(() => resolve()) : resolve()));
  fake = undefined;
});

/** A stand-in server on the project's socket that answers each request line with `respond`. */
async function listen(project: string, respond: (socket: Socket, request: any, n: number) => void): Promise<{ requests: any[] }> {
  const socketPath = localSocketPath(project);
  prepareSocketDir(socketPath);
  const seen = { requests: [] as any[] };
  fake = createServer((socket) => {
    let buffered = "";
    socket.on("data", (chunk) => {
      buffered += chunk;
      for (let i = buffered.indexOf("\n"); i >= 0; i = buffered.indexOf("\n")) {
        const request = JSON.parse(buffered.slice(0, i));
        buffered = buffered.slice(i + 1);
        seen.requests.push(request);
        respond(socket, request, seen.requests.length);
      }
    });
  });
  await new Promise<void>((resolve) => fake!.listen(socketPath, resolve));
  return seen;
}

const answer = (socket: Socket, result: unknown) => socket.write(`${JSON.stringify({ v: 1, ack: true })}\n${JSON.stringify({ v: 1, result })}\n`);

describe("reading through a running server", () => {
  it("asks the server, with the protocol and this version, and returns its answer", async () => {
    const project = path.join(tempDir(), "project");
    const seen = await listen(project, (socket) => answer(socket, [{ id: "idx_from_server" }]));
    const indexes = await withReader({ project }, (reader) => reader.listIndexes());
    expect(indexes).toEqual([{ id: "idx_from_server" }]);
    expect(seen.requests).toEqual([{ v: 1, version: expect.any(String), op: "listIndexes", args: [] }]);
  });

  it("runs here at once when the server closed the connection between two requests (an interactive session's pages)", async () => {
    const project = path.join(tempDir(), "project");
    let closed: Promise<unknown> = Promise.resolve();
    const seen = await listen(project, (socket) => {
      closed = new Promise((resolve) => socket.once("close", resolve));
      answer(socket, [{ id: "idx_from_server" }]);
      socket.end();
    });
    await withReader({ project }, async (reader) => {
      expect(await reader.listIndexes()).toEqual([{ id: "idx_from_server" }]);
      // the connection is closed on both sides: the reader has seen the server end it
      await within("the connection to close", closed);
      // the project does not exist: here, the engine's own answer
      await expect(reader.getIndex("docs")).rejects.toMatchObject({ code: "INDEX_NOT_FOUND" });
    });
    expect(seen.requests).toHaveLength(1);
  });

  it("reports the server's answer of a user's mistake as the error it is, and steps aside for the server's own failures", async () => {
    const project = path.join(tempDir(), "project");
    await listen(project, (socket, request) => {
      socket.write(`${JSON.stringify({ v: 1, ack: true })}\n`);
      const error = request.op === "getIndex" ? { name: "NotFoundError", code: "INDEX_NOT_FOUND", message: "No index named docs (from the server)" } : { name: "InternalError", code: "INTERNAL", message: "boom" };
      socket.write(`${JSON.stringify({ v: 1, error })}\n`);
    });
    await withReader({ project }, async (reader) => {
      await expect(reader.getIndex("docs")).rejects.toMatchObject({ name: "NotFoundError", message: "No index named docs (from the server)", exitCode: 3 });
    });
    await withReader({ project }, async (reader) => {
      expect(await reader.listIndexes()).toEqual([]); // the server failed: the engine here answers (no project: no indexes)
    });
  });
});
