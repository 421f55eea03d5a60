/**
 * The server's end of the local channel (engine/local-socket.ts): searches and reads from this
 * machine's CLI, over a socket only this user can reach, answered by the server's warm engine under
 * the same cap on work at once as HTTP searches and object lists.
 */
import { chmodSync, unlinkSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import {
  LOCAL_OPERATIONS,
  LOCAL_PROTOCOL,
  MAX_LOCAL_REQUEST_BYTES,
  prepareSocketDir,
  SemsearchError,
  UsageError,
  type Engine,
  type LocalOperation,
  type LocalRequest,
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
const NUMBER_PARAMS = ["limit", "offset", "semanticRatio"] as const;

/** A search's parameters, only those a search takes, each of its type. */
function searchParams(given: unknown): SearchParams {
  if (typeof given !== "object" || given === null || Array.isArray(given)) throw new UsageError("BAD_REQUEST", "The local search has no parameters object");
  const params: Record<string, unknown> = {};
  for (const [names, type] of [[STRING_PARAMS, "string"], [NUMBER_PARAMS, "number"], [["snippets", "fieldWarnings", "highlightsRank"], "boolean"]] as const) {
    for (const name of names) {
      const value: unknown = Object.hasOwn(given, name) ? (given as Record<string, unknown>)[name] : undefined;
      if (value === undefined) continue;
      if (typeof value !== type) throw new UsageError("BAD_REQUEST", `The local search's ${name} is not a ${type}`);
      params[name] = value;
    }
  }
  if (typeof params.query !== "string") throw new UsageError("BAD_REQUEST", "The local search has no query");
  return params as unknown as SearchParams;
}

type ArgType = "string" | "number" | "params";

/**
 * Each operation: its arguments' types (each is the engine method of the same name) and the path of
 * the HTTP route doing the same, for the access log.
 */
const OPERATIONS: Record<LocalOperation, { args: readonly ArgType[]; path: (id: string) => string }> = {
  search: { args: ["string", "params"], path: (id) => `/v1/indexes/${id}/search` },
  listIndexes: { args: [], path: () => "/v1/indexes" },
  getIndex: { args: ["string"], path: (id) => `/v1/indexes/${id}` },
  getObject: { args: ["string"], path: (id) => `/v1/objects/${id}` },
  listObjects: { args: ["number", "number"], path: () => "/v1/objects" },
};

export interface LocalCall {
  op: LocalOperation;
  args: unknown[];
}

/** The operation a request line asks for, with its arguments checked against the operation's signature. */
export function localCall(line: string, version: string): LocalCall {
  let request: unknown;
  try {
    request = JSON.parse(line);
  } catch {
    throw new UsageError("BAD_REQUEST", "The local request is not JSON");
  }
  const envelope = request as Partial<Record<keyof LocalRequest, unknown>> | null;
  // A client of another version runs the operation in its own process, so its output comes from its own code.
  if (envelope?.v !== LOCAL_PROTOCOL || envelope.version !== version) {
    throw new UsageError("LOCAL_VERSION", `This server is semsearch ${version} (local protocol ${LOCAL_PROTOCOL}); the client is another version`);
  }
  const op = envelope.op;
  if (typeof op !== "string" || !(LOCAL_OPERATIONS as readonly string[]).includes(op)) throw new UsageError("BAD_REQUEST", "The local request names no known operation");
  const signature = OPERATIONS[op as LocalOperation].args;
  const given = envelope.args;
  if (!Array.isArray(given) || given.length !== signature.length) throw new UsageError("BAD_REQUEST", `The local ${op} takes ${signature.length} arguments`);
  const args = signature.map((type, i) => {
    if (type === "params") return searchParams(given[i]);
    if (typeof given[i] !== type) throw new UsageError("BAD_REQUEST", `Argument ${i + 1} of the local ${op} is not a ${type}`);
    return given[i] as unknown;
  });
  return { op: op as LocalOperation, args };
}

/** The engine's answer to a call: the engine method the operation is named after. */
function perform(engine: Engine, { op, args }: LocalCall): Promise<unknown> {
  return (engine[op] as (...a: unknown[]) => Promise<unknown>).apply(engine, args);
}

/** The access log's path for a call ("-" for a request that named none). */
function loggedPath(call: LocalCall | null): string {
  return call ? OPERATIONS[call.op].path(logSegment(call.args[0])) : "-";
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
  try {
    if (!prepareSocketDir(socketPath)) return { reason: `the directory of ${socketPath} is not this user's alone` };
  } catch (error) {
    // XDG_RUNTIME_DIR of another user (kept by sudo), a file where the directory should be: no socket, the server runs on
    return { reason: `cannot create the directory of ${socketPath} (${(error as NodeJS.ErrnoException).code ?? String(error)})` };
  }
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
  // allowHalfOpen: a client that ends its side after sending still gets its answers
  const server: Server = createServer({ allowHalfOpen: true }, (socket) => serveConnection(engine, socket, options, connections, () => closing));
  // Beyond this, new connections are closed at once and their clients run the command themselves.
  server.maxConnections = MAX_CONNECTIONS;
  const listening = await new Promise<string | null>((resolve) => {
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    server.listen(socketPath, () => resolve(null));
  });
  if (listening !== null) return { reason: `cannot listen on ${socketPath} (${listening})` };
  // A connection that cannot be accepted (out of file descriptors) is dropped, and its client runs the
  // command itself; an 'error' event with no listener would end the whole server.
  server.on("error", () => {});
  try {
    if (process.platform !== "win32") chmodSync(socketPath, 0o600); // its directory is private too
  } catch (error) {
    server.close();
    return { reason: `cannot set the permissions of ${socketPath} (${(error as NodeJS.ErrnoException).code ?? String(error)})` };
  }
  return {
    socketPath,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        server.close(() => resolve());
        // idle connections (an interactive session between pages) end now, the others after their answer
        for (const [socket, connection] of connections) if (connection.lines.length === 0 && !connection.answering) socket.end();
      }),
    destroy: () => {
      for (const socket of connections.keys()) socket.destroy();
    },
  };
}

const ACK_LINE = `${JSON.stringify({ v: LOCAL_PROTOCOL, ack: true })}\n`;

/** Connections open at once; a client turned away runs the command in its own process. */
const MAX_CONNECTIONS = 128;

/** Requests a connection may have waiting; the CLI sends one at a time, so more is a flood (the connection is closed). */
const MAX_QUEUED_LINES = 64;

/** A connection with no request for this long is closed (an interactive session left open, say). */
const IDLE_MS = 10 * 60_000;

interface Connection {
  /** Request lines read and not yet taken. */
  lines: string[];
  /** Whether a request is being answered (one at a time; reading pauses meanwhile). */
  answering: boolean;
  /** The client ended its side: the connection ends once its requests are answered. */
  ended: boolean;
}

/**
 * Reads request lines and answers them one at a time, in order. While one is answered the socket is
 * not read, and the next waits until the answer is flushed to the client: a client that sends and
 * never reads holds one answer in the server's memory, not all of them.
 */
function serveConnection(engine: Engine, socket: Socket, options: LocalChannelOptions, connections: Map<Socket, Connection>, closing: () => boolean): void {
  const connection: Connection = { lines: [], answering: false, ended: false };
  connections.set(socket, connection);
  socket.on("close", () => connections.delete(socket));
  socket.on("error", () => socket.destroy());
  // destroy, not end: a client that stopped reading would keep an ended socket open for ever
  socket.setTimeout(IDLE_MS, () => socket.destroy());
  const partial: string[] = [];
  let partialBytes = 0;

  const finishIfDone = () => {
    if (connection.lines.length === 0 && !connection.answering && (connection.ended || closing())) socket.end();
  };
  const next = async () => {
    if (connection.answering) return;
    const line = connection.lines.shift();
    if (line === undefined) {
      socket.resume();
      finishIfDone();
      return;
    }
    connection.answering = true;
    socket.pause();
    try {
      const flushed = await answer(engine, socket, line, options);
      if (!flushed) await new Promise<void>((resolve) => {
        socket.once("drain", resolve);
        socket.once("close", resolve);
      });
    } finally {
      connection.answering = false;
    }
    if (!socket.destroyed) void next();
  };

  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    let from = 0;
    for (let newline = chunk.indexOf("\n"); newline >= 0; newline = chunk.indexOf("\n", from)) {
      partial.push(chunk.slice(from, newline));
      const line = partial.join("");
      partial.length = 0;
      partialBytes = 0;
      from = newline + 1;
      if (line.trim() === "") continue; // blank lines are no requests: not queued, not acknowledged
      if (connection.lines.length >= MAX_QUEUED_LINES) {
        // a client sends one request at a time: this one floods
        socket.destroy();
        return;
      }
      connection.lines.push(line);
      // Received: the client now waits for the answer however long it takes, not just a moment.
      socket.write(ACK_LINE);
    }
    if (from < chunk.length) {
      const rest = chunk.slice(from);
      partial.push(rest);
      partialBytes += Buffer.byteLength(rest);
    }
    if (partialBytes > MAX_LOCAL_REQUEST_BYTES) {
      const error = new UsageError("BAD_REQUEST", `The local request is larger than ${MAX_LOCAL_REQUEST_BYTES} bytes`);
      socket.end(`${JSON.stringify({ v: LOCAL_PROTOCOL, error: error.toJSON() } satisfies LocalResponse)}\n`);
      partial.length = 0;
      partialBytes = 0;
      connection.lines.length = 0;
      return;
    }
    void next();
  });
  socket.on("end", () => {
    connection.ended = true;
    finishIfDone();
  });
}

/** A path segment for the log, whatever the client sent (a lone surrogate cannot be percent-encoded). */
function logSegment(value: unknown): string {
  try {
    return encodeURIComponent(String(value).slice(0, 200));
  } catch {
    return "-";
  }
}

/** Answers one request line; resolves whether the answer was flushed (false: wait for drain). Never throws. */
async function answer(engine: Engine, socket: Socket, line: string, options: LocalChannelOptions): Promise<boolean> {
  const started = performance.now();
  let response: LocalResponse;
  let status = 200;
  let call: LocalCall | null = null;
  try {
    const asked = localCall(line, options.version);
    call = asked;
    response = { v: LOCAL_PROTOCOL, result: await options.run(() => perform(engine, asked)) };
  } catch (caught) {
    const error = options.classify(caught);
    status = error.status;
    response = { v: LOCAL_PROTOCOL, error: error.toJSON() };
  }
  let flushed = true;
  try {
    if (socket.writable) flushed = socket.write(`${JSON.stringify(response)}\n`);
    const ms = Math.round((performance.now() - started) * 10) / 10;
    options.onRequest?.({ method: "LOCAL", path: loggedPath(call), status, ms });
  } catch {
    socket.destroy();
  }
  return flushed;
}
