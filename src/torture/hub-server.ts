/**
 * A stand-in for the Hugging Face hub on 127.0.0.1 (for the tests and the torture run), serving model folders in the hub's shape:
 * `GET /api/models/<id>/revision/<rev>?blobs=true` (commit and file list with sizes, LFS SHA-256
 * for .onnx files, git blob ids for the rest) and `GET /<id>/resolve/<rev>/<path>` with range
 * requests. Faults are set per test: a connection cut after some bytes, a corrupted byte, a wrong
 * listed size, a server that stops sending, a range ignored.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";

export interface HubFaults {
  /** Cut the connection after this many bytes of the response body of files ending in `path`. */
  cut?: { path: string; bytes: number };
  /** Flip one byte in the middle of files ending in `path`. */
  corrupt?: string;
  /** List this file with a size smaller by 10 bytes. */
  understate?: string;
  /** Send the headers and this many bytes of the file, then nothing more. */
  stall?: { path: string; bytes: number };
  /** Answer range requests with the whole file (200). */
  ignoreRange?: boolean;
  /** List this file without any hash. */
  unhashed?: string;
  /** Answer the model API with headers and half a body, then nothing. */
  apiStall?: boolean;
  /** Answer the model API with this text instead of the listing. */
  apiBody?: string;
  /** Send files in chunks of this many bytes, one every 5 ms (a slow link, so a download can be killed midway). */
  throttle?: number;
  /** Send the headers and this many bytes of the file, then the rest once `release` resolves (a download held midway for as long as a test needs). */
  hold?: { path: string; bytes: number; release: Promise<void> };
}

export interface HubServer {
  url: string;
  /** Every request as `METHOD path [range]`. */
  requests: string[];
  faults: HubFaults;
  close(): Promise<void>;
}

function walk(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? walk(full, base) : [path.relative(base, full).split(path.sep).join("/")];
  });
}

/** Serves each `models[id]` folder as the hub's model `id` at one fixed commit. */
export async function startHub(models: Record<string, string>, revision = "0123456789abcdef0123456789abcdef01234567"): Promise<HubServer> {
  const requests: string[] = [];
  const faults: HubFaults = {};
  const open = new Set<ServerResponse>();

  const listing = (id: string) => {
    const dir = models[id] as string;
    return walk(dir).map((file) => {
      const content = readFileSync(path.join(dir, file));
      const size = faults.understate === file ? content.length - 10 : content.length;
      if (faults.unhashed === file) return { rfilename: file, size };
      return file.endsWith(".onnx")
        ? { rfilename: file, size, lfs: { sha256: createHash("sha256").update(content).digest("hex"), size, pointerSize: 134 } }
        : { rfilename: file, size, blobId: createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex") };
    });
  };

  const serveFile = (req: IncomingMessage, res: ServerResponse, file: string) => {
    let content = readFileSync(file);
    if (faults.corrupt && file.endsWith(faults.corrupt)) {
      content = Buffer.from(content);
      const middle = Math.floor(content.length / 2);
      content[middle] = (content[middle] as number) ^ 0xff;
    }
    let start = 0;
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
    if (range && !faults.ignoreRange) {
      start = Number(range[1]);
      res.writeHead(206, { "content-length": content.length - start, "content-range": `bytes ${start}-${content.length - 1}/${content.length}`, "accept-ranges": "bytes" });
    } else {
      res.writeHead(200, { "content-length": content.length, "accept-ranges": "bytes" });
    }
    const body = content.subarray(start);
    if (faults.stall && file.endsWith(faults.stall.path)) {
      res.write(body.subarray(0, faults.stall.bytes));
      return; // never ends: the client's stall timeout must give up
    }
    const hold = faults.hold;
    if (hold && file.endsWith(hold.path)) {
      res.write(body.subarray(0, hold.bytes));
      void hold.release.then(() => {
        if (!res.destroyed) res.end(body.subarray(hold.bytes));
      });
      return;
    }
    if (faults.cut && file.endsWith(faults.cut.path)) {
      // The bytes are flushed before the connection drops, as when a network fails mid-file.
      res.write(body.subarray(0, faults.cut.bytes), () => setTimeout(() => res.socket?.destroy(), 200));
      return;
    }
    if (faults.throttle) {
      const size = faults.throttle;
      let at = 0;
      const timer = setInterval(() => {
        if (res.destroyed || at >= body.length) {
          clearInterval(timer);
          if (!res.destroyed) res.end();
          return;
        }
        res.write(body.subarray(at, at + size));
        at += size;
      }, 5);
      res.on("close", () => clearInterval(timer));
      return;
    }
    res.end(body);
  };

  const server = createServer((req, res) => {
    open.add(res);
    res.on("close", () => open.delete(res));
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const pathname = decodeURIComponent(url.pathname);
    requests.push(`${req.method} ${pathname}${req.headers.range ? ` ${req.headers.range}` : ""}`);
    const api = /^\/api\/models\/([^/]+\/[^/]+)\/revision\/([^/]+)$/.exec(pathname);
    if (api) {
      const id = api[1] as string;
      if (!Object.hasOwn(models, id)) {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "Repository not found" }));
        return;
      }
      const body = faults.apiBody ?? JSON.stringify({ id, sha: revision, siblings: listing(id) });
      if (faults.apiStall) {
        res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
        res.write(body.slice(0, Math.floor(body.length / 2)));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end(body);
      return;
    }
    const resolve = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(pathname);
    if (resolve && Object.hasOwn(models, resolve[1] as string) && resolve[2] === revision) {
      const dir = models[resolve[1] as string] as string;
      const file = path.join(dir, resolve[3] as string);
      if (file.startsWith(dir + path.sep) && statSync(file, { throwIfNoEntry: false })?.isFile()) {
        serveFile(req, res, file);
        return;
      }
    }
    res.writeHead(404).end("not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    faults,
    close: () =>
      new Promise((resolve) => {
        for (const res of open) res.socket?.destroy();
        server.close(() => resolve());
      }),
  };
}
