/** Starts the built `semsearch serve` as a subprocess on an ephemeral loopback port. */
import { spawn, type ChildProcess } from "node:child_process";
import { connect } from "node:net";
import { BIN, ROOT, userEnv } from "./cli.js";

export interface Served {
  url: string;
  child: ChildProcess;
  /** Everything the server wrote on stderr so far. */
  stderr(): string;
  /** Sends a signal and resolves with the exit code (-1 for a signal) once it exits. */
  stop(signal?: NodeJS.Signals): Promise<number>;
  exited: Promise<number>;
}

/** `semsearch --project <project> serve --port 0 <args>`; resolves once it prints its URL, rejects if it exits first. */
export function serve(project: string, args: string[] = [], env: Record<string, string | undefined> = {}): Promise<Served> {
  const child = spawn(process.execPath, [BIN, "--project", project, "serve", "--port", "0", ...args], {
    cwd: ROOT,
    env: userEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<number>((resolve) => child.on("close", (code) => resolve(code ?? -1)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start in 30 s\n${stderr}`)), 30_000);
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      const line = /^(http:\/\/\S+)\n/.exec(stdout);
      if (!line) return;
      clearTimeout(timer);
      resolve({
        url: line[1] as string,
        child,
        stderr: () => stderr,
        exited,
        stop: (signal = "SIGTERM") => {
          child.kill(signal);
          return exited;
        },
      });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited ${code} before listening\n${stderr}`));
    });
  });
}

/** A fetch with a key (or none) that returns status, headers, the body text and its JSON. */
export async function call(url: string, key: string | null, init: RequestInit = {}): Promise<{ status: number; headers: Headers; text: string; json: any }> {
  const headers = new Headers(init.headers);
  if (key !== null) headers.set("authorization", `Bearer ${key}`);
  const response = await fetch(url, { ...init, headers });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: any;
}

/**
 * A request written by hand on a socket, its body sent in chunks when the test says so: for tests
 * that must know where the server is in a request. It asks for `100 Continue`, which the server
 * sends once it has read the head and handed the request to the app.
 */
export interface RawRequest {
  /** Resolves once the server answered 100 Continue: the request is in flight. */
  continued: Promise<void>;
  /** Sends a piece of the body (chunked transfer encoding). */
  send(text: string): void;
  /** Ends the body. */
  end(): void;
  /** Closes the connection, mid-request. */
  drop(): void;
  /** The final answer; rejects when the connection closes without one. */
  answer: Promise<RawAnswer>;
  /** Whether the final answer has arrived. */
  answered(): boolean;
}

/** Parses a whole answer (head and body) out of `data`, or null while it is incomplete. */
function parseAnswer(data: Buffer): RawAnswer | null {
  const headEnd = data.indexOf("\r\n\r\n");
  if (headEnd < 0) return null;
  const [statusLine, ...lines] = data.subarray(0, headEnd).toString("latin1").split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let rest = data.subarray(headEnd + 4);
  let body: Buffer;
  if (headers["transfer-encoding"] === "chunked") {
    const pieces: Buffer[] = [];
    for (;;) {
      const lineEnd = rest.indexOf("\r\n");
      if (lineEnd < 0) return null;
      const size = parseInt(rest.subarray(0, lineEnd).toString("latin1"), 16);
      if (size === 0) break;
      if (rest.length < lineEnd + 2 + size + 2) return null;
      pieces.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      rest = rest.subarray(lineEnd + 2 + size + 2);
    }
    body = Buffer.concat(pieces);
  } else {
    const length = Number(headers["content-length"] ?? 0);
    if (rest.length < length) return null;
    body = rest.subarray(0, length);
  }
  const text = body.toString("utf8");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? "")?.[1] ?? 0), headers, text, json };
}

export function rawRequest(url: string, method: string, target: string, headers: Record<string, string> = {}): RawRequest {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.on("error", () => {});
  let data = Buffer.alloc(0);
  let done = false;
  let onContinue = () => {};
  const continued = new Promise<void>((resolve) => (onContinue = resolve));
  const answer = new Promise<RawAnswer>((resolve, reject) => {
    socket.on("data", (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      // Interim answers (100 Continue) come first, each a head alone.
      while (/^HTTP\/1\.1 1\d\d /.test(data.subarray(0, 16).toString("latin1")) && data.indexOf("\r\n\r\n") >= 0) {
        data = data.subarray(data.indexOf("\r\n\r\n") + 4);
        onContinue();
      }
      const parsed = parseAnswer(data);
      if (parsed && !done) {
        done = true;
        resolve(parsed);
      }
    });
    socket.on("close", () => reject(new Error(`the connection closed without an answer${data.length ? `: ${data.toString("latin1").slice(0, 200)}` : ""}`)));
  });
  answer.catch(() => {});
  const head = Object.entries({ host: `${hostname}:${port}`, "transfer-encoding": "chunked", expect: "100-continue", ...headers }).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.write(`${method} ${target} HTTP/1.1\r\n${head.join("")}\r\n`);
  return {
    continued,
    send: (text) => {
      const bytes = Buffer.from(text);
      socket.write(`${bytes.length.toString(16)}\r\n`);
      socket.write(bytes);
      socket.write("\r\n");
    },
    end: () => socket.write("0\r\n\r\n"),
    drop: () => socket.destroy(),
    answer,
    answered: () => done,
  };
}

/**
 * Resolves once `check` holds (polled every 20 ms). Rejects after `guardMs`, naming what it waited
 * for: a guard against a hang, not a measure of time.
 */
export async function waitUntil(check: () => boolean | Promise<boolean>, what: string, guardMs = 120_000): Promise<void> {
  const deadline = Date.now() + guardMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Keeps `requests` sending, one blank line (nothing, in JSON Lines) each every 100 ms, until `stop`
 * holds or `most` lines each were sent; then ends their bodies. Resolves whether `stop` held
 * while they were still sending.
 */
export async function drip(requests: RawRequest[], stop: () => boolean, most = 600): Promise<boolean> {
  let stopped = false;
  for (let sent = 0; sent < most && !(stopped = stop()); sent++) {
    for (const request of requests) request.send("\n");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  for (const request of requests) request.end();
  return stopped;
}
