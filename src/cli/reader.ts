/**
 * What `search` and the reading commands (`index list|get|status`, `objects get|list`) read with: a
 * running `semsearch serve` of the project, over the local channel (engine/local-socket.ts), when
 * one answers; else an engine in this process. A server that goes away, is stopping, is busy or runs
 * another version of semsearch is not an error: the operation runs here instead, with the same result.
 */
import { createConnection, type Socket } from "node:net";
import {
  errorFromPayload,
  LOCAL_PROTOCOL,
  localSocketPath,
  socketDirIsPrivate,
  stopEarlyThread,
  type Engine,
  type LocalOperation,
  type LocalRequest,
  type LocalResponse,
} from "../engine/index.js";
import { openEngine, projectDir, type GlobalOptions } from "./options.js";
import { pkg } from "./package-info.js";

/** The engine's reading operations; `imageThumbnail` always runs in this process. */
export type Reader = Pick<Engine, LocalOperation | "imageThumbnail" | "prepareSearch">;

/**
 * Answers of a server that mean "run it yourself": it is stopping, busy or of another version, or it
 * failed for a reason of its own (its machine, a bug): run here, the command either succeeds or
 * reports its own error as it would without a server.
 */
const STEP_ASIDE_CODES = new Set(["SHUTTING_DOWN", "BUSY", "LOCAL_VERSION"]);
const STEP_ASIDE_NAMES = new Set(["InternalError", "EnvironmentError", "RequestRefusedError"]);

/** How long a server has to acknowledge a request (a stopped server accepts connections and never reads). */
const ACK_TIMEOUT_MS = 2_000;

/** How long an acknowledged request may take before the command runs here instead. */
const ANSWER_TIMEOUT_MS = 60_000;

/** The channel failed or the server stepped aside: run in this process. */
class Unanswered extends Error {}

/** One connection to a server; requests one at a time. */
class LocalClient {
  private chunks: string[] = [];
  private lines: string[] = [];
  private closed = false;
  private wake: (() => void) | null = null;

  private constructor(private readonly socket: Socket) {
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      let from = 0;
      for (let newline = chunk.indexOf("\n"); newline >= 0; newline = chunk.indexOf("\n", from)) {
        this.chunks.push(chunk.slice(from, newline));
        this.lines.push(this.chunks.join(""));
        this.chunks = [];
        from = newline + 1;
      }
      if (from < chunk.length) this.chunks.push(chunk.slice(from));
      this.wake?.();
    });
    // A server that stopped or died between two requests (an interactive session's pages): the next one runs here at once.
    socket.on("close", () => {
      this.closed = true;
      this.wake?.();
    });
    socket.on("error", () => socket.destroy());
  }

  /** A connection to the server listening on `socketPath`, or null when none answers there. */
  static connect(socketPath: string): Promise<LocalClient | null> {
    if (!socketDirIsPrivate(socketPath)) return Promise.resolve(null);
    return new Promise((resolve) => {
      const socket = createConnection(socketPath);
      socket.once("connect", () => resolve(new LocalClient(socket)));
      socket.once("error", () => resolve(null));
    });
  }

  /** The next line from the server, within `ms`. */
  private async line(ms: number, waitingFor: string): Promise<LocalResponse> {
    const deadline = Date.now() + ms;
    while (this.lines.length === 0) {
      if (this.closed) throw new Unanswered("the server closed the connection");
      const left = deadline - Date.now();
      if (left <= 0) throw new Unanswered(`the server did not send ${waitingFor} in time`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
    const line = this.lines.shift() as string;
    let response: LocalResponse;
    try {
      response = JSON.parse(line) as LocalResponse;
    } catch {
      throw new Unanswered("the server's answer is not JSON");
    }
    if (response?.v !== LOCAL_PROTOCOL) throw new Unanswered("the server speaks another protocol");
    return response;
  }

  async call(op: LocalOperation, args: unknown[]): Promise<unknown> {
    if (this.closed) throw new Unanswered("the server closed the connection");
    const request: LocalRequest = { v: LOCAL_PROTOCOL, version: pkg.version, op, args };
    this.socket.write(`${JSON.stringify(request)}\n`);
    let response = await this.line(ACK_TIMEOUT_MS, "an acknowledgement");
    if ("ack" in response) response = await this.line(ANSWER_TIMEOUT_MS, "an answer");
    if ("ack" in response) throw new Unanswered("the server acknowledged twice");
    if ("error" in response) {
      if (STEP_ASIDE_CODES.has(response.error.code) || STEP_ASIDE_NAMES.has(response.error.name)) throw new Unanswered(response.error.message);
      throw errorFromPayload(response.error);
    }
    return response.result;
  }

  close(): void {
    this.closed = true;
    this.socket.destroy();
  }
}

/**
 * Runs `fn` with a reader of the project: a running server's when one answers (and `--in-process`
 * is not given), else this process's engine, opened only if it is needed.
 */
export async function withReader<T>(options: GlobalOptions & { inProcess?: boolean }, fn: (reader: Reader) => Promise<T>): Promise<T> {
  const dir = projectDir(options);
  let client = options.inProcess ? null : await LocalClient.connect(localSocketPath(dir));
  // (a server answers: the thread bin/semsearch started for a search's model is not needed here)
  if (client) stopEarlyThread();
  let engine: Engine | undefined;
  const here = () => (engine ??= openEngine(options, dir));
  /** The operation on the server while it answers, else here. */
  const either =
    <K extends LocalOperation>(op: K) =>
    async (...args: Parameters<Engine[K]>): Promise<Awaited<ReturnType<Engine[K]>>> => {
      if (client) {
        try {
          return (await client.call(op, args)) as Awaited<ReturnType<Engine[K]>>;
        } catch (error) {
          if (!(error instanceof Unanswered)) throw error;
          client.close();
          client = null;
        }
      }
      const engine = here();
      return (await (engine[op] as (...a: unknown[]) => Promise<unknown>).apply(engine, args)) as Awaited<ReturnType<Engine[K]>>;
    };
  const reader: Reader = {
    search: either("search"),
    listIndexes: either("listIndexes"),
    getIndex: either("getIndex"),
    getObject: either("getObject"),
    listObjects: either("listObjects"),
    imageThumbnail: (objectId, identifier, size) => here().imageThumbnail(objectId, identifier, size),
    // A search answered here loads its model from the start; one a server answers needs nothing here.
    prepareSearch: (indexId) => {
      if (!client) here().prepareSearch(indexId);
    },
  };
  try {
    return await fn(reader);
  } finally {
    client?.close();
    await engine?.close();
  }
}
