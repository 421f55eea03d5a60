/**
 * Request bodies received whole, to temporary files, before their work waits for a place at a
 * gate: a client that sends slowly then holds only its own connection, never one of the few places
 * that every writer waits for (nginx buffers request bodies to disk the same way). The files are in a
 * directory of this server's own in the OS's temporary directory (`TMPDIR`), not in the project:
 * they are the transport's, and the engine alone writes the project's files.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { EnvironmentError, formatByteLimit, processAlive, RequestRefusedError, SemsearchError, systemErrorCode } from "../engine/index.js";
import { checkDeclaredLength, limitedStream, OBJECTS_HINT } from "./body.js";

/** A body received to a file; `release` removes the file (call it once the work is done). */
export interface ReceivedBody {
  path: string;
  bytes: number;
  release(): void;
}

export interface BodySpoolOptions {
  /** The bytes of bodies held at once (being received, or waiting for their turn); beyond, 503 BUSY. */
  maxBytes: number;
  /** Where this server's directory is made (default: the OS's temporary directory). */
  parent?: string;
}

const PREFIX = "semsearch-bodies-";

/** A body directory's name: the prefix, then the server's process id. */
const DIRECTORY = new RegExp(`^${PREFIX}(\\d+)-`);

/** Removes the body directories of servers that were killed (its name holds the server's process id). */
function removeAbandoned(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(DIRECTORY.exec(name)?.[1] ?? Number.NaN);
    if (!Number.isInteger(pid) || pid === process.pid || processAlive(pid)) continue;
    try {
      rmSync(path.join(parent, name), { recursive: true, force: true });
    } catch {
      // another user's (the temporary directory is shared): theirs to remove
    }
  }
}

/** A failure to write bodies where they are received: the server's temporary directory, not the project. */
function spoolError(error: unknown): SemsearchError {
  if (error instanceof SemsearchError) return error;
  const code = systemErrorCode(error) ?? "EIO";
  return new EnvironmentError(code, `The server cannot write request bodies to its temporary directory (${code})`, {
    hint: "The server's temporary directory (TMPDIR) must be a writable directory with room for the bodies being received.",
    cause: error,
  });
}

export class BodySpool {
  private dir: string | null = null;
  private held = 0;
  private files = 0;

  constructor(private readonly options: BodySpoolOptions) {}

  /** Removes what killed servers left in the temporary directory (a server does at its start, not at its first body). */
  removeAbandoned(): void {
    removeAbandoned(this.parent());
  }

  private parent(): string {
    return this.options.parent ?? tmpdir();
  }

  /** This server's directory, made at the first body (mode 700: mkdtemp's). */
  private directory(): string {
    if (this.dir === null) {
      try {
        this.dir = mkdtempSync(path.join(this.parent(), `${PREFIX}${process.pid}-`));
      } catch (error) {
        throw spoolError(error);
      }
    }
    return this.dir;
  }

  /**
   * A new body file, open: opened before the body is read, so a body that fails at once is removed
   * after its file exists (a write stream opens its file in the background, and a file removed
   * before that open was then created and never removed). A directory removed under the server (a
   * cleaner of old temporary files) is made again.
   */
  private async create(): Promise<{ file: string; handle: FileHandle }> {
    for (let attempt = 0; ; attempt++) {
      const file = path.join(this.directory(), `body-${++this.files}`);
      try {
        return { file, handle: await open(file, "wx", 0o600) };
      } catch (error) {
        if (attempt > 0 || (error as NodeJS.ErrnoException).code !== "ENOENT") throw spoolError(error);
        this.dir = null;
      }
    }
  }

  /** Bytes of bodies held now. */
  heldBytes(): number {
    return this.held;
  }

  private busy(): RequestRefusedError {
    return new RequestRefusedError(503, "BUSY", `The server holds ${formatByteLimit(this.held)} of request bodies waiting to be added: try again shortly`, {
      headers: { "Retry-After": "1", connection: "close" },
    });
  }

  /**
   * Reads the whole body to a file: 413 past `limit`, 499 when the client leaves first, 503 BUSY
   * when the bodies held would pass the spool's bytes. The file is removed on failure.
   */
  async receive(request: Request, limit: number, complete?: () => boolean, hint = OBJECTS_HINT): Promise<ReceivedBody> {
    checkDeclaredLength(request.headers, limit, hint);
    const declared = Number(request.headers.get("content-length") ?? 0);
    if (Number.isSafeInteger(declared) && declared > 0 && this.held + declared > this.options.maxBytes) throw this.busy();
    const { file, handle } = await this.create();
    let bytes = 0;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.held -= bytes;
      rmSync(file, { force: true });
    };
    const count = (chunk: number) => {
      if (this.held + chunk > this.options.maxBytes) throw this.busy();
      this.held += chunk;
      bytes += chunk;
    };
    const sink = handle.createWriteStream();
    try {
      await pipeline(limitedStream(request, limit, hint, count, complete), sink);
    } catch (error) {
      sink.destroy(); // closes the file (the pipeline has, unless it never started)
      release();
      throw spoolError(error);
    }
    return { path: file, bytes, release };
  }

  /** Removes the directory and whatever is left in it (a stop past its deadline). */
  close(): void {
    if (this.dir !== null) rmSync(this.dir, { recursive: true, force: true });
    this.dir = null;
  }
}
