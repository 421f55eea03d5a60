/**
 * What `semsearch search` searches with: a running `semsearch serve` of the project, over the local
 * channel (engine/local-socket.ts), when one answers; else an engine in this process. A server that
 * goes away, is stopping, is busy or runs another version of semsearch is not an error: the search
 * runs here instead, with the same result.
 */
import { createConnection, type Socket } from "node:net";
import {
  errorFromPayload,
  LOCAL_PROTOCOL,
  localSocketPath,
  socketDirIsPrivate,
  type Engine,
  type LocalRequest,
  type LocalResponse,
  type SearchPage,
  type SearchParams,
} from "../engine/index.js";
import { openEngine, projectDir, type GlobalOptions } from "./options.js";
import { pkg } from "./package-info.js";

export type Searcher = Pick<Engine, "search" | "imageThumbnail">;

/** Answers of a server that mean "search yourself": it is stopping, busy, or of another version. */
const STEP_ASIDE = new Set(["SHUTTING_DOWN", "BUSY", "LOCAL_VERSION"]);

/** How long a server may take to answer before the search runs here instead (a stopped server accepts and never answers). */
const ANSWER_TIMEOUT_MS = 120_000;

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

  async search(index: string, params: SearchParams): Promise<SearchPage> {
    const request: LocalRequest & { version: string } = { v: LOCAL_PROTOCOL, version: pkg.version, search: { index, params } };
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
    return response.page;
  }

  close(): void {
    this.socket.destroy();
  }
}

/**
 * Runs `fn` with a searcher for the project: a running server's when one answers (and `--in-process`
 * is not given), else this process's engine, opened only if it is needed.
 */
export async function withSearcher<T>(options: GlobalOptions & { inProcess?: boolean }, fn: (searcher: Searcher) => Promise<T>): Promise<T> {
  const dir = projectDir(options);
  let client = options.inProcess ? null : await LocalClient.connect(localSocketPath(dir));
  let engine: Engine | undefined;
  const here = () => (engine ??= openEngine(options, dir));
  const searcher: Searcher = {
    async search(indexId, params) {
      if (client) {
        try {
          return await client.search(indexId, params);
        } catch (error) {
          if (!(error instanceof Unanswered)) throw error;
          client.close();
          client = null;
        }
      }
      return here().search(indexId, params);
    },
    imageThumbnail: (objectId, identifier, size) => here().imageThumbnail(objectId, identifier, size),
  };
  try {
    return await fn(searcher);
  } finally {
    client?.close();
    await engine?.close();
  }
}
