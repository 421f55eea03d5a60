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
  type Engine,
  type LocalOperation,
  type LocalRequest,
  type LocalResponse,
} from "../engine/index.js";
import { openEngine, projectDir, type GlobalOptions } from "./options.js";
import { pkg } from "./package-info.js";

/** The engine's reading operations; `imageThumbnail` always runs in this process. */
export type Reader = Pick<Engine, LocalOperation | "imageThumbnail">;

/** Answers of a server that mean "search yourself": it is stopping, busy, or of another version. */
const STEP_ASIDE = new Set(["SHUTTING_DOWN", "BUSY", "LOCAL_VERSION"]);

/** How long a server may take to answer before the search runs here instead (a stopped server accepts and never answers). */
const ANSWER_TIMEOUT_MS = 30_000;

/** The channel failed or the server stepped aside: search in this process. */
class Unanswered extends Error {}

/** One connection to a server; requests one at a time. */
class LocalClient {
  private buffered = "";
  private waiting: { resolve: (line: string) => void; reject: (error: Error) => void } | null = null;

  private constructor(private readonly socket: Socket) {
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      this.buffered += chunk;
      const newline = this.buffered.indexOf("\n");
      if (newline < 0 || !this.waiting) return;
      const line = this.buffered.slice(0, newline);
      this.buffered = this.buffered.slice(newline + 1);
      const { resolve } = this.waiting;
      this.waiting = null;
      resolve(line);
    });
    const fail = () => this.waiting?.reject(new Unanswered("the server closed the connection"));
    socket.on("close", fail);
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

  async call(op: LocalOperation, args: unknown[]): Promise<unknown> {
    const request: LocalRequest = { v: LOCAL_PROTOCOL, version: pkg.version, op, args };
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Unanswered("the server did not answer in time")), ANSWER_TIMEOUT_MS);
      this.waiting = {
        resolve: (answer) => {
          clearTimeout(timer);
          resolve(answer);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.socket.write(`${JSON.stringify(request)}\n`);
    });
    let response: LocalResponse;
    try {
      response = JSON.parse(line) as LocalResponse;
    } catch {
      throw new Unanswered("the server's answer is not JSON");
    }
    if (response?.v !== LOCAL_PROTOCOL) throw new Unanswered("the server speaks another protocol");
    if ("error" in response) {
      if (STEP_ASIDE.has(response.error.code)) throw new Unanswered(response.error.message);
      throw errorFromPayload(response.error);
    }
    return response.result;
  }

  close(): void {
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
  };
  try {
    return await fn(reader);
  } finally {
    client?.close();
    await engine?.close();
  }
}
