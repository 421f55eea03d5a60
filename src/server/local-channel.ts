/**
 * The server's end of the local channel (engine/local-socket.ts): searches from this machine's CLI,
 * over a socket only this user can reach, answered by the server's warm engine and under the same
 * cap on searches at once as HTTP searches.
 */
import { chmodSync, unlinkSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import {
  LOCAL_PROTOCOL,
  MAX_LOCAL_REQUEST_BYTES,
  prepareSocketDir,
  SemsearchError,
  UsageError,
  type Engine,
  type LocalResponse,
  type SearchParams,
} from "../engine/index.js";

export interface LocalChannelOptions {
  socketPath: string;
  /** Runs a search under the server's cap (and counts it as in flight); refuses when stopping. */
  run: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Anything thrown, as an error a client may be shown (bugs say only that they happened). */
  classify: (caught: unknown) => SemsearchError;
  /** semsearch's version: clients of another version are told to search in their own process. */
  version: string;
  onRequest?: (entry: { method: string; path: string; status: number; ms: number }) => void;
}

export interface LocalChannel {
  socketPath: string;
  /** Stops accepting; resolves when every connection has had its answers and ended. */
  close(): Promise<void>;
  /** Ends every connection now (a stop past its deadline). */
  destroy(): void;
}

const STRING_PARAMS = ["query", "objectFields", "resultFields", "mode", "filter"] as const;
const NUMBER_PARAMS = ["limit", "offset", "vectorWeight"] as const;

/** The request's search, with only the parameters a search takes, each of its type. */
export function searchRequest(line: string, version: string): { index: string; params: SearchParams } {
  let request: unknown;
  try {
    request = JSON.parse(line);
  } catch {
    throw new UsageError("BAD_REQUEST", "The local request is not JSON");
  }
  const envelope = request as { v?: unknown; version?: unknown; search?: unknown } | null;
  // A client of another version searches in its own process, so its results come from its own code.
  if (envelope?.v !== LOCAL_PROTOCOL || envelope.version !== version) {
    throw new UsageError("LOCAL_VERSION", `This server is semsearch ${version} (local protocol ${LOCAL_PROTOCOL}); the client is another version`);
  }
  const search = envelope.search as { index?: unknown; params?: unknown } | undefined;
  if (typeof search !== "object" || search === null || typeof search.index !== "string" || typeof search.params !== "object" || search.params === null) {
    throw new UsageError("BAD_REQUEST", 'The local request has no {"search":{"index","params"}}');
  }
  const given = search.params as Record<string, unknown>;
  const params: Record<string, unknown> = {};
  for (const [names, type] of [[STRING_PARAMS, "string"], [NUMBER_PARAMS, "number"], [["snippets"], "boolean"]] as const) {
    for (const name of names) {
      if (!Object.hasOwn(given, name) || given[name] === undefined) continue;
      if (typeof given[name] !== type) throw new UsageError("BAD_REQUEST", `The local request's ${name} is not a ${type}`);
      params[name] = given[name];
    }
  }
  if (typeof params.query !== "string") throw new UsageError("BAD_REQUEST", "The local request has no query");
  return { index: search.index, params: params as unknown as SearchParams };
}

/** Whether a server answers on `socketPath` (then a second server of the project leaves it be). */
function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(socketPath);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * Listens on the project's socket. Null, with the reason, when another server of the project
 * already does, or when the socket's directory is not this user's alone.
 */
export async function startLocalChannel(engine: Engine, options: LocalChannelOptions): Promise<LocalChannel | { reason: string }> {
  const { socketPath } = options;
  if (!prepareSocketDir(socketPath)) return { reason: `the directory of ${socketPath} is not this user's alone` };
  if (process.platform !== "win32") {
    if (await answers(socketPath)) return { reason: `another server of this project answers on ${socketPath}` };
    try {
      unlinkSync(socketPath); // left by a server that was killed
    } catch {
      // none was there
    }
  }
  const connections = new Map<Socket, Connection>();
  let closing = false;
  const server: Server = createServer((socket) => serveConnection(engine, socket, options, connections, () => closing));
  const listening = await new Promise<string | null>((resolve) => {
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    server.listen(socketPath, () => resolve(null));
  });
  if (listening !== null) return { reason: `cannot listen on ${socketPath} (${listening})` };
  if (process.platform !== "win32") chmodSync(socketPath, 0o600); // its directory is private too
  return {
    socketPath,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        server.close(() => resolve());
        // idle connections (an interactive session between pages) end now, the others after their answer
        for (const [socket, connection] of connections) if (connection.pending === 0) socket.end();
      }),
    destroy: () => {
      for (const socket of connections.keys()) socket.destroy();
    },
  };
}

interface Connection {
  /** Requests read and not yet answered. */
  pending: number;
}

function serveConnection(engine: Engine, socket: Socket, options: LocalChannelOptions, connections: Map<Socket, Connection>, closing: () => boolean): void {
  const connection: Connection = { pending: 0 };
  connections.set(socket, connection);
  socket.on("close", () => connections.delete(socket));
  socket.on("error", () => socket.destroy());
  let buffered = "";
  let busy: Promise<void> = Promise.resolve();
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    buffered += chunk;
    let newline: number;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      connection.pending++;
      // one request at a time per connection, answered in order
      busy = busy.then(async () => {
        await answer(engine, socket, line, options);
        if (--connection.pending === 0 && closing()) socket.end();
      });
    }
    if (Buffer.byteLength(buffered) > MAX_LOCAL_REQUEST_BYTES) {
      const error = new UsageError("BAD_REQUEST", `The local request is larger than ${MAX_LOCAL_REQUEST_BYTES} bytes`);
      socket.end(`${JSON.stringify({ v: LOCAL_PROTOCOL, error: error.toJSON() } satisfies LocalResponse)}\n`);
      buffered = "";
    }
  });
}

async function answer(engine: Engine, socket: Socket, line: string, options: LocalChannelOptions): Promise<void> {
  const started = performance.now();
  let response: LocalResponse;
  let status = 200;
  let index = "-";
  try {
    const request = searchRequest(line, options.version);
    index = request.index;
    response = { v: LOCAL_PROTOCOL, page: await options.run(() => engine.search(request.index, request.params)) };
  } catch (caught) {
    const error = options.classify(caught);
    status = error.status;
    response = { v: LOCAL_PROTOCOL, error: error.toJSON() };
  }
  if (socket.writable) socket.write(`${JSON.stringify(response)}\n`);
  const ms = Math.round((performance.now() - started) * 10) / 10;
  options.onRequest?.({ method: "LOCAL", path: `/v1/indexes/${encodeURIComponent(index.slice(0, 200))}/search`, status, ms });
}
