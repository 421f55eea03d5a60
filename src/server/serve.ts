/**
 * The HTTP server around the app: Node's http server with limits on headers and slow clients,
 * a count of requests in flight, and a graceful stop (stop accepting, finish what is in flight,
 * then close the engine).
 */
import { createAdaptorServer } from "@hono/node-server";
import { STATUS_CODES, type Server } from "node:http";
import type { Duplex } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import type { AddressInfo } from "node:net";
import { EnvironmentError, errorBody, RequestRefusedError, UsageError, type Engine } from "../engine/index.js";
import { bodySpool, classify, createApp, jsonResponse, searchGate, type AppOptions } from "./app.js";
import { startLocalChannel, type LocalChannel } from "./local-channel.js";

export interface ServeOptions extends AppOptions {
  host: string;
  /** 0: any free port. */
  port: number;
  /** Largest request head (request line and headers), in bytes (default 16 KiB): beyond, 431. */
  maxHeaderBytes?: number;
  /** Time a client has to send its headers (default 10 s) and its whole request (default 5 minutes). */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** Idle time after which a kept-alive connection is closed (default 5 s). */
  keepAliveTimeoutMs?: number;
  /** How long a stop waits for requests in flight before closing their connections (default 30 s). */
  shutdownTimeoutMs?: number;
  /** Also answer this machine's CLI searches on this socket (engine/local-socket.ts); none when absent. */
  localSocket?: string;
}

export interface RunningServer {
  url: string;
  port: number;
  /** Requests being answered now. */
  inFlight(): number;
  /** HTTP connections open now, idle ones included. */
  connections(): Promise<number>;
  /** Stops accepting, waits for requests in flight (up to shutdownTimeoutMs), closes the engine. Resolves true when every request finished. */
  stop(): Promise<boolean>;
  /** The socket the CLI's searches are answered on, or why there is none (another server of the project has it). */
  local: { socketPath: string } | { reason: string } | null;
}

export { isLoopback } from "./hosts.js";

function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  const where = `${host}:${port}`;
  if (error.code === "EADDRINUSE") return new EnvironmentError("EADDRINUSE", `Cannot listen on ${where}: the port is in use`, { hint: "Stop what uses it, or choose another port with --port." });
  if (error.code === "EACCES") return new EnvironmentError("EACCES", `Cannot listen on ${where}: permission denied`, { hint: "Ports below 1024 need privileges: choose another port with --port." });
  if (error.code === "EADDRNOTAVAIL" || error.code === "ENOTFOUND" || error.code === "EAI_AGAIN") return new UsageError("BAD_HOST", `Cannot listen on ${where}: no such address on this machine`, { hint: "Give an address of this machine with --host (127.0.0.1 by default)." });
  return error;
}

const CLIENT_ERRORS: Record<number, [string, string]> = {
  400: ["BAD_REQUEST", "The request is not valid HTTP"],
  408: ["REQUEST_TIMEOUT", "The request did not arrive in time"],
  413: ["BODY_TOO_LARGE", "The request is too large"],
  431: ["HEADERS_TOO_LARGE", "The request headers are larger than the server accepts"],
};

/** How long an answer to a refused request may take to leave before its connection is closed anyway. */
const CLIENT_ERROR_FLUSH_MS = 1000;

/**
 * Requests Node's parser refuses before the app sees them (headers too large or too slow, not HTTP):
 * answered in the API's error shape, and logged like any request. The connection is then closed
 * whole, once the answer is flushed (or after CLIENT_ERROR_FLUSH_MS): `end` alone leaves it half
 * open, and a client that never reads nor closes would keep its descriptor for as long as it likes.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex, onRequest: ServeOptions["onRequest"]): void {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = error.code === "HPE_HEADER_OVERFLOW" ? 431 : error.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : error.code === "HPE_CHUNK_EXTENSIONS_OVERFLOW" ? 413 : 400;
  const [code, message] = CLIENT_ERRORS[status] as [string, string];
  const body = `${JSON.stringify(errorBody(new RequestRefusedError(status, code, message)))}\n`;
  const timer = setTimeout(() => socket.destroy(), CLIENT_ERROR_FLUSH_MS);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`, () => socket.destroy());
  onRequest?.({ method: "-", path: "-", status, ms: 0 });
}

export async function startServer(engine: Engine, options: ServeOptions): Promise<RunningServer> {
  const gate = searchGate(options);
  const spool = options.bodySpool ?? bodySpool(options);
  spool.removeAbandoned();
  const app = createApp(engine, { ...options, searchGate: gate, bodySpool: spool });
  let stopping = false;
  const shuttingDown = () => jsonResponse(errorBody(new RequestRefusedError(503, "SHUTTING_DOWN", "The server is stopping")), 503, { "Retry-After": "1", connection: "close" });
  // Requests counted while the engine works on them, whether or not their client is still there.
  let inFlight = 0;
  const counted = async <T>(work: () => Promise<T>): Promise<T> => {
    inFlight++;
    try {
      return await work();
    } finally {
      inFlight--;
    }
  };
  const fetch = async (request: Request, env: unknown) => (stopping ? shuttingDown() : counted(async () => app.fetch(request, env)));
  const server = createAdaptorServer({
    fetch,
    overrideGlobalObjects: false,
    // Node checks the two timeouts below only every connectionsCheckingInterval (30 s by default).
    serverOptions: { maxHeaderSize: options.maxHeaderBytes ?? 16 * 1024, connectionsCheckingInterval: 1000 },
  }) as Server;
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => answerClientError(error, socket, options.onRequest));
  server.headersTimeout = options.headersTimeoutMs ?? 10_000;
  server.requestTimeout = options.requestTimeoutMs ?? 300_000;
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => reject(listenError(error, options.host, options.port)));
    server.listen(options.port, options.host, () => resolve());
  });
  let local: LocalChannel | { reason: string } | null = null;
  if (options.localSocket !== undefined) {
    local = await startLocalChannel(engine, {
      socketPath: options.localSocket,
      run: (work) => {
        if (stopping) throw new RequestRefusedError(503, "SHUTTING_DOWN", "The server is stopping");
        return counted(() => gate.run(work));
      },
      classify: (caught) => classify(caught, options.onServerError),
      version: options.version ?? "0.0.0",
      onRequest: options.onRequest,
    });
  }
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let stopped: Promise<boolean> | null = null;
  const stop = async (): Promise<boolean> => {
    stopping = true;
    const closed = Promise.all([new Promise<void>((resolve) => server.close(() => resolve())), local && "close" in local ? local.close() : undefined]);
    const deadline = Date.now() + (options.shutdownTimeoutMs ?? 30_000);
    // Kept-alive connections with nothing in flight are closed now, and the others once their answer is sent.
    while (inFlight > 0 && Date.now() < deadline) {
      server.closeIdleConnections();
      await sleep(25);
    }
    const finished = inFlight === 0;
    server.closeAllConnections();
    if (local && "destroy" in local) local.destroy();
    await closed;
    spool.close();
    try {
      await engine.close();
    } catch {
      // the process is ending; work cut off by the deadline is recovered from its journal by the next writer
    }
    return finished;
  };
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    inFlight: () => inFlight,
    connections: () => new Promise((resolve, reject) => server.getConnections((error, count) => (error ? reject(error) : resolve(count)))),
    stop: () => (stopped ??= stop()),
    local: local && "close" in local ? { socketPath: local.socketPath } : local,
  };
}
