/**
 * Where a running `semsearch serve` answers this machine's CLI, and what the two say to each other.
 *
 * A CLI search loads a model runtime and the model (about half a second) before its first result; a
 * running server has both warm. So `serve` also listens on a local socket (a Unix domain socket; a
 * named pipe on Windows) and `semsearch search` asks it first, falling back to searching in its own
 * process when nothing answers. The socket is named after the project's real path, in a directory
 * only this user may use: the server's answers are trusted as the project's own data, so the client
 * refuses a directory another user could have prepared.
 *
 * Reading commands (`index list`, `index get`, `index status`, `objects get`, `objects list`) are
 * answered the same way: with the server's database already open, they skip loading LanceDB too.
 *
 * Protocol: one JSON document per line each way, on one connection, one request at a time:
 *   → {"v":1,"version":"0.1.0","op":"search","args":["docs",{…SearchParams}]}
 *   ← {"v":1,"ack":true}                   at once, as the request is read
 *   ← {"v":1,"result":…}  or  {"v":1,"error":{…ErrorPayload}}
 * The result is what the engine's method of that name returns. A server that does not acknowledge
 * a request at once (stopped, or its event loop held up) is not waited for.
 */
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, realpathSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ErrorPayload } from "./errors.js";
import { isBucketAddress } from "./location.js";

/** The protocol's version; a client and server that differ do not talk (the client searches itself). */
export const LOCAL_PROTOCOL = 1;

/** Largest request line a server reads, in bytes: a search's parameters are far smaller. */
export const MAX_LOCAL_REQUEST_BYTES = 1024 * 1024;

/** The engine's reading operations a server answers for the CLI. */
export const LOCAL_OPERATIONS = ["search", "listIndexes", "getIndex", "getObject", "listObjects"] as const;
export type LocalOperation = (typeof LOCAL_OPERATIONS)[number];

export interface LocalRequest {
  v: number;
  /** semsearch's version: a server of another version does not answer (the client runs the operation itself). */
  version: string;
  op: LocalOperation;
  args: unknown[];
}

export type LocalResponse = { v: number; result: unknown } | { v: number; error: ErrorPayload } | { v: number; ack: true };

/**
 * The real path of a project directory; for one that does not exist yet, the real path of its
 * nearest existing parent joined with the rest (so a server started before its project is created,
 * under a symbolic link such as macOS's /tmp, is found once it exists).
 */
export function realProjectPath(projectDir: string): string {
  if (isBucketAddress(projectDir)) return projectDir; // a bucket project: its address is its name
  const resolved = path.resolve(projectDir);
  const missing: string[] = [];
  for (let at = resolved; ; at = path.dirname(at)) {
    try {
      return path.join(realpathSync(at), ...missing.reverse());
    } catch {
      if (path.dirname(at) === at) return resolved;
      missing.push(path.basename(at));
    }
  }
}

/** This user's directory for sockets: $XDG_RUNTIME_DIR/semsearch, else <tmpdir>/semsearch-<uid>. */
function socketDir(): string {
  const runtime = process.env.XDG_RUNTIME_DIR;
  if (runtime && path.isAbsolute(runtime)) return path.join(runtime, "semsearch");
  const uid = typeof process.getuid === "function" ? process.getuid() : os.userInfo().username;
  return path.join(os.tmpdir(), `semsearch-${uid}`);
}

/** Longest socket path used, in bytes: under every platform's limit (104 on macOS, 108 on Linux, with its NUL). */
const MAX_SOCKET_PATH_BYTES = 100;

/**
 * The socket (or pipe) a server of this project listens on. Where the usual directory would make the
 * path too long for a socket (a long TMPDIR), /tmp/semsearch-<uid> is used instead: a longer path
 * would be cut short by the system, and two projects could share one socket.
 */
export function localSocketPath(projectDir: string): string {
  const hash = createHash("sha256").update(realProjectPath(projectDir)).digest("hex").slice(0, 24);
  if (process.platform === "win32") return `\\\\.\\pipe\\semsearch-${hash}`;
  const usual = path.join(socketDir(), `${hash}.sock`);
  if (Buffer.byteLength(usual) <= MAX_SOCKET_PATH_BYTES) return usual;
  return path.join("/tmp", `semsearch-${typeof process.getuid === "function" ? process.getuid() : "user"}`, `${hash}.sock`);
}

/**
 * Whether the socket's directory is this user's alone (owned by them, no access for others), so
 * whatever listens there was started by them. Named pipes on Windows have no such directory.
 */
export function socketDirIsPrivate(socketPath: string): boolean {
  if (process.platform === "win32") return true;
  try {
    const stats = lstatSync(path.dirname(socketPath));
    return stats.isDirectory() && stats.uid === process.getuid?.() && (stats.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

/**
 * Creates the socket directory for a server (mode 0700) in its existing parent (the runtime or
 * temporary directory; not recursively, which loops for ever under /proc in Node 20); false when it
 * exists but is not private. Throws when it cannot be made.
 */
export function prepareSocketDir(socketPath: string): boolean {
  if (process.platform === "win32") return true;
  try {
    mkdirSync(path.dirname(socketPath), { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return socketDirIsPrivate(socketPath);
}
