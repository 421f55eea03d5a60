import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, LookupFunction } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { defaultFetchOptions, ImageFetcher, type FetchOptions, type FetchResult } from "../../../src/engine/images/fetch.js";
import { cacheLimit, ImageCache } from "../../../src/engine/images/fetch-cache.js";
import { tempDir } from "../../helpers/temp.js";
import { waitFor } from "../../helpers/wait.js";

const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");
const OTHER_PNG = Buffer.concat([PNG, Buffer.from("version 2")]);

type Route = (req: IncomingMessage, res: ServerResponse, hit: number) => void;

/** A real HTTP server on 127.0.0.1 that counts hits, bodies sent and requests in flight. */
class TestServer {
  readonly hits = new Map<string, number>();
  readonly requests: IncomingMessage[] = [];
  bodies = 0;
  inFlight = 0;
  maxInFlight = 0;
  /** hold(): answers are held until this many requests are in flight together (then each waits 150 ms, as a slow server's). */
  holdUntil = 0;
  private held: (() => void)[] = [];
  private server = http.createServer((req, res) => this.handle(req, res));
  constructor(private readonly routes: Record<string, Route>) {}

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  reset(): void {
    this.hits.clear();
    this.requests.length = 0;
    this.bodies = this.maxInFlight = this.holdUntil = 0;
  }

  /**
   * Answers with `reply` once `holdUntil` requests are in flight at once (so a client's concurrency is
   * seen however slowly the machine runs), and 150 ms later after that (so it has the chance to exceed it).
   */
  hold(reply: () => void): void {
    if (this.holdUntil === 0) return void setTimeout(reply, 150);
    this.held.push(reply);
    if (this.inFlight < this.holdUntil) return;
    this.holdUntil = 0;
    for (const held of this.held.splice(0)) held();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const pathname = new URL(req.url ?? "/", "http://x").pathname;
    const route = this.routes[pathname] ?? Object.entries(this.routes).find(([prefix]) => prefix.endsWith("*") && pathname.startsWith(prefix.slice(0, -1)))?.[1];
    const hit = (this.hits.get(pathname) ?? 0) + 1;
    this.hits.set(pathname, hit);
    this.requests.push(req);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    res.on("close", () => this.inFlight--);
    if (!route) return void res.writeHead(404).end();
    route(req, res, hit);
  }
}

function png(res: ServerResponse, body: Buffer = PNG, headers: Record<string, string> = {}): void {
  res.writeHead(200, { "content-type": "image/png", "content-length": body.byteLength, ...headers }).end(body);
}

/** The etag route's current image. */
let etagImage = { tag: '"v1"', body: PNG };
let dripWritten = 0;
let chunkedWritten = 0;
let chunkedClosed: Promise<void> = Promise.resolve();

const server = new TestServer({
  "/a.png": (_req, res) => png(res),
  "/flaky.png": (_req, res, hit) => (hit === 1 ? res.writeHead(500).end() : png(res)),
  "/down.png": (_req, res) => res.writeHead(500).end("oops"),
  "/busy.png": (_req, res, hit) => (hit === 1 ? res.writeHead(429, { "retry-after": "1" }).end() : png(res)),
  "/teapot.png": (_req, res) => res.writeHead(418).end(),
  "/drip.png": (_req, res) => {
    res.writeHead(200, { "content-type": "image/png" });
    const timer = setInterval(() => {
      dripWritten++;
      res.write(PNG.subarray(0, 1));
    }, 50);
    res.on("close", () => clearInterval(timer));
  },
  "/silent.png": () => {},
  "/declared-huge.png": (_req, res) => {
    res.writeHead(200, { "content-type": "image/png", "content-length": String(10_000_000) });
    res.write(Buffer.alloc(512));
  },
  "/chunked-huge.png": (_req, res) => {
    res.writeHead(200, { "content-type": "image/png" });
    const chunk = Buffer.alloc(16 * 1024, 1);
    const timer = setInterval(() => {
      if (chunkedWritten >= 20 * 1024 * 1024) return void res.end();
      chunkedWritten += chunk.byteLength;
      res.write(chunk);
    }, 5);
    chunkedClosed = new Promise((resolve) => res.on("close", () => (clearInterval(timer), resolve())));
  },
  "/html": (_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<html></html>"),
  "/json": (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end("{}"),
  "/octet": (_req, res) => png(res, PNG, { "content-type": "application/octet-stream" }),
  "/binary": (_req, res) => png(res, PNG, { "content-type": "binary/octet-stream" }),
  "/typed": (_req, res) => png(res, PNG, { "content-type": "IMAGE/PNG; charset=binary" }),
  "/untyped": (_req, res) => res.writeHead(200, { "content-length": PNG.byteLength }).end(PNG),
  "/empty.png": (_req, res) => png(res, Buffer.alloc(0)),
  "/r/start": (_req, res) => res.writeHead(302, { location: "target.png" }).end(),
  "/r/target.png": (_req, res) => png(res),
  "/loop/a": (_req, res) => res.writeHead(301, { location: "/loop/b" }).end(),
  "/loop/b": (req, res) => res.writeHead(307, { location: `http://${req.headers.host}/loop/a` }).end(),
  "/chain/*": (req, res) => res.writeHead(302, { location: `/chain/${Number(req.url?.split("/")[2]) + 1}` }).end(),
  "/to-ftp": (_req, res) => res.writeHead(302, { location: "ftp://example.com/a.png" }).end(),
  "/etag.png": (req, res) => {
    if (req.headers["if-none-match"] === etagImage.tag) return void res.writeHead(304, { etag: etagImage.tag }).end();
    server.bodies++;
    png(res, etagImage.body, { etag: etagImage.tag });
  },
  "/dated.png": (req, res) => {
    const date = "Wed, 21 Oct 2015 07:28:00 GMT";
    if (req.headers["if-modified-since"] === date) return void res.writeHead(304).end();
    server.bodies++;
    png(res, PNG, { "last-modified": date });
  },
  "/slow.png": (_req, res) => server.hold(() => png(res)),
  "/gzip.png": (_req, res) => png(res, PNG, { "content-encoding": "gzip" }),
});

let base = "";
const dir = tempDir("semsearch-images-fetch-");
const fetchers: ImageFetcher[] = [];

function options(overrides: Partial<FetchOptions> = {}): FetchOptions {
  return { ...defaultFetchOptions(null, {}), retryDelayMs: 10, timeoutMs: 3000, ...overrides };
}

function fetcher(overrides: Partial<FetchOptions> = {}): ImageFetcher {
  const created = new ImageFetcher(options(overrides));
  fetchers.push(created);
  return created;
}

function get(url: string, overrides: Partial<FetchOptions> = {}): Promise<FetchResult> {
  return fetcher(overrides).fetch({ kind: "http", url });
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

beforeAll(async () => {
  base = await server.start();
});
beforeEach(() => server.reset());
afterAll(async () => {
  for (const created of fetchers) created.close();
  await server.close();
});

describe("ImageFetcher over HTTP", () => {
  it("downloads an image, asking for images as semsearch", async () => {
    expect(await get(`${base}/a.png`)).toEqual({ ok: true, bytes: PNG, fromCache: false });
    expect(server.requests[0]?.headers).toMatchObject({ accept: "image/*", "user-agent": expect.stringMatching(/^semsearch\/\d+\.\d+\.\d+/) });
  });

  it.each([
    ["/missing.png", "HTTP 404", false, 1],
    ["/teapot.png", "HTTP 418", false, 1],
    ["/down.png", "HTTP 500 (after 3 tries)", true, 3],
    ["/html", "not an image (Content-Type text/html)", false, 1],
    ["/json", "not an image (Content-Type application/json)", false, 1],
    ["/empty.png", "empty response", false, 1],
    ["/loop/a", "redirect loop", false, 2],
    ["/chain/0", "too many redirects (more than 5)", false, 6],
    ["/to-ftp", 'redirect to unsupported URL scheme "ftp:"', false, 1],
  ])("%s fails: %s", async (route, reason, retryable, requests) => {
    expect(await get(`${base}${route}`)).toEqual({ ok: false, reason, retryable });
    expect(server.requests).toHaveLength(requests);
  });

  it.each(["/octet", "/binary", "/typed", "/untyped", "/r/start"])("%s is taken as an image", async (route) => {
    expect(await get(`${base}${route}`)).toEqual({ ok: true, bytes: PNG, fromCache: false });
  });

  it("follows a relative redirect", async () => {
    await get(`${base}/r/start`);
    expect(server.requests.map((req) => req.url)).toEqual(["/r/start", "/r/target.png"]);
  });

  it("retries a 500 and succeeds", async () => {
    expect(await get(`${base}/flaky.png`)).toEqual({ ok: true, bytes: PNG, fromCache: false });
    expect(server.hits.get("/flaky.png")).toBe(2);
  });

  it("waits as long as Retry-After asks on a 429", async () => {
    const started = Date.now();
    expect(await get(`${base}/busy.png`)).toMatchObject({ ok: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(server.hits.get("/busy.png")).toBe(2);
  });

  it("gives up on a slow drip at the total timeout", async () => {
    dripWritten = 0;
    const started = Date.now();
    expect(await get(`${base}/drip.png`, { timeoutMs: 800, retries: 0 })).toEqual({ ok: false, reason: "timed out after 0.8 s", retryable: true });
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(750);
    expect(elapsed).toBeLessThan(1500);
    expect(dripWritten).toBeGreaterThan(5);
  });

  it("gives up on a server that never answers, after retrying", async () => {
    expect(await get(`${base}/silent.png`, { timeoutMs: 400, retries: 1 })).toEqual({ ok: false, reason: "timed out after 0.4 s (after 2 tries)", retryable: true });
    expect(server.hits.get("/silent.png")).toBe(2);
  });

  it("gives up on a connection that is never made at the connect timeout", async () => {
    const hang: LookupFunction = () => {};
    const started = Date.now();
    const result = await get("http://never.test/a.png", { lookup: hang, connectTimeoutMs: 300, timeoutMs: 5000, retries: 0 });
    expect(result).toEqual({ ok: false, reason: "no answer within 0.3 s (connect)", retryable: true });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("says when the name does not resolve", async () => {
    const fail: LookupFunction = (hostname, _options, callback) => callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), "", 4);
    expect(await get("http://nowhere.test/a.png", { lookup: fail })).toEqual({ ok: false, reason: "DNS lookup failed", retryable: false });
  });

  it("says when the connection is refused, after retrying", async () => {
    const closed = new TestServer({});
    const url = await closed.start();
    await closed.close();
    expect(await get(`${url}/a.png`)).toEqual({ ok: false, reason: "connection refused (after 3 tries)", retryable: true });
  });

  it("refuses at once a body whose Content-Length is over the limit", async () => {
    const started = Date.now();
    expect(await get(`${base}/declared-huge.png`, { maxBytes: 1024 })).toEqual({ ok: false, reason: "larger than 1 KB", retryable: false });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("stops reading a chunked body as soon as it passes the limit", async () => {
    chunkedWritten = 0;
    expect(await get(`${base}/chunked-huge.png`, { maxBytes: 64 * 1024 })).toEqual({ ok: false, reason: "larger than 64 KB", retryable: false });
    await chunkedClosed;
    // The server saw the connection closed long before its 20 MB were sent.
    expect(chunkedWritten).toBeGreaterThan(64 * 1024);
    expect(chunkedWritten).toBeLessThan(2 * 1024 * 1024);
  });

  it("abandons a download when its signal aborts: the connection is closed, the result says cancelled", async () => {
    const controller = new AbortController();
    const result = fetcher({ timeoutMs: 3_600_000, connectTimeoutMs: 3_600_000, retries: 2 }).fetch({ kind: "http", url: `${base}/silent.png` }, controller.signal);
    await waitFor("the server to get the request", () => server.inFlight === 1);
    controller.abort();
    expect(await result).toEqual({ ok: false, reason: "cancelled", retryable: false });
    await waitFor("the server to see the connection closed", () => server.inFlight === 0);
    expect(server.hits.get("/silent.png")).toBe(1);
    // (an aborted signal fetches nothing)
    expect(await fetcher().fetch({ kind: "http", url: `${base}/a.png` }, controller.signal)).toEqual({ ok: false, reason: "cancelled", retryable: false });
    expect(server.hits.get("/a.png")).toBeUndefined();
  });

  it("has at most `concurrency` requests in flight", async () => {
    server.holdUntil = 2;
    const limited = fetcher({ concurrency: 2 });
    const results = await Promise.all(Array.from({ length: 6 }, () => limited.fetch({ kind: "http", url: `${base}/slow.png` })));
    expect(results.every((result) => result.ok)).toBe(true);
    expect(server.maxInFlight).toBe(2);
    server.reset();
    server.holdUntil = 4;
    const wider = fetcher({ concurrency: 4 });
    await Promise.all(Array.from({ length: 6 }, () => wider.fetch({ kind: "http", url: `${base}/slow.png` })));
    expect(server.maxInFlight).toBe(4);
  });
});

describe("the download cache", () => {
  const cacheDir = path.join(dir, "cache");
  const entry = (url: string) => path.join(cacheDir, sha256(url));

  it("revalidates with If-None-Match, uses the cache on 304 and replaces it when the image changes", async () => {
    etagImage = { tag: '"v1"', body: PNG };
    const url = `${base}/etag.png`;
    const cached = fetcher({ cacheDir });
    expect(await cached.fetch({ kind: "http", url })).toEqual({ ok: true, bytes: PNG, fromCache: false });
    const meta = JSON.parse(readFileSync(`${entry(url)}.json`, "utf8"));
    expect(meta).toMatchObject({ url, etag: '"v1"', content_type: "image/png", size: PNG.byteLength, sha256: createHash("sha256").update(PNG).digest("hex") });
    expect(readFileSync(`${entry(url)}.bin`)).toEqual(PNG);

    expect(await cached.fetch({ kind: "http", url })).toEqual({ ok: true, bytes: PNG, fromCache: true });
    expect(server.requests[1]?.headers["if-none-match"]).toBe('"v1"');
    expect(server.bodies).toBe(1);

    etagImage = { tag: '"v2"', body: OTHER_PNG };
    expect(await cached.fetch({ kind: "http", url })).toEqual({ ok: true, bytes: OTHER_PNG, fromCache: false });
    expect(server.bodies).toBe(2);
    expect(JSON.parse(readFileSync(`${entry(url)}.json`, "utf8")).etag).toBe('"v2"');
    expect(await cached.fetch({ kind: "http", url })).toEqual({ ok: true, bytes: OTHER_PNG, fromCache: true });
    expect(server.bodies).toBe(2);
  });

  it("revalidates with If-Modified-Since", async () => {
    const url = `${base}/dated.png`;
    await get(url, { cacheDir });
    expect(await get(url, { cacheDir })).toEqual({ ok: true, bytes: PNG, fromCache: true });
    expect(server.requests[1]?.headers["if-modified-since"]).toBe("Wed, 21 Oct 2015 07:28:00 GMT");
    expect(server.bodies).toBe(1);
  });

  it("drops a damaged entry and downloads afresh, unconditionally", async () => {
    etagImage = { tag: '"v3"', body: PNG };
    const url = `${base}/etag.png`;
    await get(url, { cacheDir });
    writeFileSync(`${entry(url)}.bin`, Buffer.concat([PNG.subarray(0, 10), Buffer.alloc(PNG.byteLength - 10)]));
    expect(await get(url, { cacheDir })).toEqual({ ok: true, bytes: PNG, fromCache: false });
    expect(server.requests[1]?.headers["if-none-match"]).toBeUndefined();
    expect(server.bodies).toBe(2);
    expect(readFileSync(`${entry(url)}.bin`)).toEqual(PNG);
  });

  it("uses the cached copy when the server is gone, and only then", async () => {
    const gone = new TestServer({ "/a.png": (_req, res) => png(res, OTHER_PNG, { etag: '"x"' }) });
    const url = `${await gone.start()}/a.png`;
    expect(await get(url, { cacheDir })).toMatchObject({ ok: true, fromCache: false });
    await gone.close();
    expect(await get(url, { cacheDir })).toEqual({ ok: true, bytes: OTHER_PNG, fromCache: true });
    expect(await get(url, { cacheDir: path.join(dir, "empty-cache") })).toEqual({ ok: false, reason: "connection refused (after 3 tries)", retryable: true });
  });

  it("keeps no credentials in the metadata", async () => {
    const url = `${base.replace("://", "://user:secret@")}/a.png`;
    expect(await get(url, { cacheDir })).toMatchObject({ ok: true });
    expect(server.requests[0]?.headers.authorization).toBe(`Basic ${Buffer.from("user:secret").toString("base64")}`);
    expect(readFileSync(`${entry(url)}.json`, "utf8")).not.toContain("secret");
  });

  it("still fetches when the cache cannot be written", async () => {
    const blocker = path.join(dir, "not-a-folder");
    writeFileSync(blocker, "");
    const errors: unknown[] = [];
    expect(await get(`${base}/a.png`, { cacheDir: path.join(blocker, "cache"), onCacheError: (error) => errors.push(error) })).toEqual({ ok: true, bytes: PNG, fromCache: false });
    expect(errors.map((error) => (error as NodeJS.ErrnoException).code)).toContain("ENOTDIR");
  });
});

describe("the download cache against damage and full disks", () => {
  const cacheDir = path.join(dir, "hardened-cache");
  const entry = (url: string) => path.join(cacheDir, sha256(url));

  it.each([
    ["a FIFO", (file: string) => spawnSync("mkfifo", [file])],
    ["a link to /dev/zero", (file: string) => symlinkSync("/dev/zero", file)],
    ["a directory", (file: string) => mkdirSync(file)],
  ])("never reads %s put in place of a cached body: it is dropped and the image downloaded again", async (_what, plant) => {
    etagImage = { tag: '"h1"', body: PNG };
    const url = `${base}/etag.png`;
    await get(url, { cacheDir });
    rmSync(`${entry(url)}.bin`);
    plant(`${entry(url)}.bin`);
    const started = Date.now();
    expect(await get(url, { cacheDir })).toEqual({ ok: true, bytes: PNG, fromCache: false });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("drops metadata whose validators cannot be sent back as headers", async () => {
    etagImage = { tag: '"h2"', body: PNG };
    const url = `${base}/etag.png`;
    await get(url, { cacheDir });
    const meta = JSON.parse(readFileSync(`${entry(url)}.json`, "utf8"));
    writeFileSync(`${entry(url)}.json`, JSON.stringify({ ...meta, etag: '"bad\u0001"' }));
    expect(await get(url, { cacheDir })).toEqual({ ok: true, bytes: PNG, fromCache: false });
    expect(server.requests.at(-1)?.headers["if-none-match"]).toBeUndefined();
  });

  it("writes nothing beyond its size limit, and removes temporary files of writers that are gone", async () => {
    const small = path.join(dir, "small-cache");
    mkdirSync(small, { recursive: true });
    const leftover = path.join(small, `${"0".repeat(64)}.bin.tmp-999999999-abcdef012345`);
    writeFileSync(leftover, "partial");
    const limited = new ImageCache(small, () => {}, PNG.byteLength + 300);
    await limited.store(`${base}/one.png`, PNG, {});
    expect(existsSync(leftover)).toBe(false);
    await limited.store(`${base}/two.png`, PNG, {});
    const files = readdirSync(small);
    expect(files.filter((file) => file.endsWith(".bin"))).toHaveLength(1);
    expect(await limited.load(`${base}/one.png`, 1e6)).toMatchObject({ body: PNG });
    expect(await new ImageCache(path.join(dir, "off-cache"), () => {}, 0).load(`${base}/x.png`, 1e6)).toBeNull();
    // a cache only read (every answer a 304, or writing turned off) removes them too
    writeFileSync(leftover, "partial");
    await new ImageCache(small, () => {}, 0).load(`${base}/one.png`, 1e6);
    expect(existsSync(leftover)).toBe(false);
  });

  it("reads its limit from SEMSEARCH_IMAGE_CACHE_MB", () => {
    expect(cacheLimit({})).toBe(1024 * 1024 * 1024);
    expect(cacheLimit({ SEMSEARCH_IMAGE_CACHE_MB: "0" })).toBe(0);
    expect(cacheLimit({ SEMSEARCH_IMAGE_CACHE_MB: "50" })).toBe(50 * 1024 * 1024);
    expect(cacheLimit({ SEMSEARCH_IMAGE_CACHE_MB: "-1" })).toBe(1024 * 1024 * 1024);
  });
});

describe("answers semsearch did not ask for", () => {
  it("refuses a compressed body", async () => {
    expect(await get(`${base}/gzip.png`)).toEqual({ ok: false, reason: "compressed by the server (Content-Encoding gzip), which semsearch did not ask for", retryable: false });
  });
});

describe("ImageFetcher on local files", () => {
  const local = (file: string, overrides: Partial<FetchOptions> = {}) => fetcher(overrides).fetch({ kind: "file", path: file });
  const isRoot = process.getuid?.() === 0;

  it("reads a file whole", async () => {
    const file = path.join(dir, "a.png");
    writeFileSync(file, PNG);
    expect(await local(file)).toEqual({ ok: true, bytes: PNG, fromCache: false });
  });

  it.each([
    ["missing", () => path.join(dir, "missing.png"), "file not found"],
    ["under a file", () => path.join(dir, "a.png", "b.png"), "file not found"],
    ["a directory", () => (mkdirSync(path.join(dir, "folder.png"), { recursive: true }), path.join(dir, "folder.png")), "is a directory"],
    ["empty", () => (writeFileSync(path.join(dir, "zero.png"), ""), path.join(dir, "zero.png")), "empty file"],
    ["over the limit", () => (writeFileSync(path.join(dir, "big.png"), Buffer.alloc(2048)), path.join(dir, "big.png")), "larger than 1 KB"],
  ])("%s", async (_name, file, reason) => {
    expect(await local(file(), { maxBytes: 1024 })).toEqual({ ok: false, reason, retryable: false });
  });

  it.skipIf(!existsSync("/dev/null"))("refuses a device", async () => {
    expect(await local("/dev/null")).toEqual({ ok: false, reason: "not a regular file", retryable: false });
  });

  const fifo = path.join(dir, "pipe.png");
  const hasFifo = process.platform !== "win32" && spawnSync("mkfifo", [fifo]).status === 0;
  it.skipIf(!hasFifo)("refuses a FIFO without waiting for a writer", async () => {
    const started = Date.now();
    expect(await local(fifo)).toEqual({ ok: false, reason: "not a regular file", retryable: false });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it.skipIf(isRoot || process.platform === "win32")("says when permission is denied", async () => {
    const file = path.join(dir, "secret.png");
    writeFileSync(file, PNG, { mode: 0o000 });
    expect(await local(file)).toEqual({ ok: false, reason: "permission denied", retryable: false });
  });

  it("throws for a relative path or a malformed reference (bugs of the caller)", async () => {
    await expect(local("relative.png")).rejects.toThrow(TypeError);
    await expect(fetcher().fetch({ kind: "http", url: "ftp://x/a.png" })).rejects.toThrow(TypeError);
    expect(() => new ImageFetcher(options({ concurrency: 0 }))).toThrow(RangeError);
  });
});

describe("defaultFetchOptions", () => {
  it("has documented defaults", () => {
    expect(defaultFetchOptions("/c", {})).toEqual({ cacheDir: "/c", maxBytes: 20 * 1024 * 1024, connectTimeoutMs: 10_000, timeoutMs: 30_000, maxRedirects: 5, retries: 2, retryDelayMs: 500, concurrency: 8 });
  });

  it.each([
    [{ SEMSEARCH_IMAGE_TIMEOUT: "5" }, { timeoutMs: 5000 }],
    [{ SEMSEARCH_IMAGE_TIMEOUT: "0.8" }, { timeoutMs: 800 }],
    [{ SEMSEARCH_IMAGE_TIMEOUT: "0" }, { timeoutMs: 30_000 }],
    [{ SEMSEARCH_IMAGE_TIMEOUT: "-3" }, { timeoutMs: 30_000 }],
    [{ SEMSEARCH_IMAGE_TIMEOUT: "soon" }, { timeoutMs: 30_000 }],
    [{ SEMSEARCH_IMAGE_MAX_BYTES: "1000" }, { maxBytes: 1000 }],
    [{ SEMSEARCH_IMAGE_MAX_BYTES: "1e6" }, { maxBytes: 20 * 1024 * 1024 }],
    [{ SEMSEARCH_IMAGE_MAX_BYTES: "99999999999999999999" }, { maxBytes: 20 * 1024 * 1024 }],
    [{ SEMSEARCH_IMAGE_RETRY_DELAY_MS: "0" }, { retryDelayMs: 0 }],
    [{ SEMSEARCH_IMAGE_RETRY_DELAY_MS: "25" }, { retryDelayMs: 25 }],
    [{ SEMSEARCH_IMAGE_RETRY_DELAY_MS: "" }, { retryDelayMs: 500 }],
    // timers cannot wait past 2^31 ms: long values are capped, not turned into instant timeouts
    [{ SEMSEARCH_IMAGE_TIMEOUT: "3000000" }, { timeoutMs: 3_600_000 }],
    [{ SEMSEARCH_IMAGE_RETRY_DELAY_MS: "9999999999" }, { retryDelayMs: 60_000 }],
    [{ SEMSEARCH_IMAGE_MAX_BYTES: "99999999999" }, { maxBytes: 1024 * 1024 * 1024 }],
  ])("%j", (env, expected) => {
    expect(defaultFetchOptions(null, env)).toMatchObject(expected);
  });
});

describe("files confined to a root (objects added over HTTP)", () => {
  const OUTSIDE = { ok: false, reason: "outside the folder the server reads images from (--image-root)" };
  const NOT_FOUND = { ok: false, reason: "file not found" };
  const base = tempDir();
  const root = path.join(base, "root");
  const outside = path.join(base, "outside");
  mkdirSync(path.join(root, "sub"), { recursive: true });
  mkdirSync(path.join(outside, "dir"), { recursive: true });
  writeFileSync(path.join(root, "sub", "in.png"), "inside bytes");
  writeFileSync(path.join(outside, "secret.png"), "secret bytes");
  const link = (target: string, name: string) => symlinkSync(target, path.join(root, name));
  link(outside, "escape");
  link(path.join(outside, "secret.png"), "link.png");
  link(path.join(root, "sub", "in.png"), "good-link.png");
  link("/", "rootfs");
  // Links out of the root whose targets are missing: the answer must be the one for an existing target.
  link(path.join(outside, "gone.png"), "gone-link.png");
  link(path.join(outside, "no-such-dir"), "gone-dir");
  link("../outside/secret.png", "relative-out.png");
  link("../outside/gone.png", "relative-gone.png");
  // Chains: link → link → target.
  link("link.png", "chain-out.png");
  link("gone-link.png", "chain-gone.png");
  link("good-link.png", "chain-in.png");
  link(path.join(outside, "back.png"), "out-and-back.png");
  symlinkSync(path.join(root, "sub", "in.png"), path.join(outside, "back.png"));
  // Links that stay inside.
  link(path.join(root, "sub", "nothing.png"), "dangling-in.png");
  link("sub/nothing.png", "dangling-relative.png");
  link("sub", "sublink");
  link("../root/sub/in.png", "up-and-in.png");
  link("loop-b.png", "loop-a.png");
  link("loop-a.png", "loop-b.png");

  it.each([
    ["sub/in.png", { ok: true }],
    ["good-link.png", { ok: true }],
    ["escape/secret.png", OUTSIDE],
    ["escape/gone.png", OUTSIDE],
    ["escape/dir", OUTSIDE],
    ["link.png", OUTSIDE],
    ["rootfs/etc/hostname", OUTSIDE],
    ["rootfs/etc/no-such-file", OUTSIDE],
    ["escape/no-such-dir/x.png", OUTSIDE],
    ["sub/missing.png", NOT_FOUND],
    // a link out whose target is missing says "outside" too: the error never tells whether a file outside exists
    ["gone-link.png", OUTSIDE],
    ["gone-dir/x.png", OUTSIDE],
    ["relative-out.png", OUTSIDE],
    ["relative-gone.png", OUTSIDE],
    // chains of links are followed link by link; one step out of the root is outside, even if a later link leads back
    ["chain-out.png", OUTSIDE],
    ["chain-gone.png", OUTSIDE],
    ["chain-in.png", { ok: true }],
    ["out-and-back.png", OUTSIDE],
    // a dangling link whose target would be inside is a file not found
    ["dangling-in.png", NOT_FOUND],
    ["dangling-relative.png", NOT_FOUND],
    // `..` in a reference is resolved on the reference (it cannot climb out: resolveImageReference refuses that);
    // `..` in a link's target is resolved on the real folder the link is in
    ["escape/../sub/in.png", { ok: true }],
    ["up-and-in.png", { ok: true }],
    // a linked folder inside the root
    ["sublink/in.png", { ok: true }],
    ["sublink/missing.png", NOT_FOUND],
    ["sub/in.png/x.png", NOT_FOUND],
    ["loop-a.png", { ok: false, reason: "too many symbolic links" }],
  ])("%s", async (relative, expected) => {
    const result = await fetcher().fetch({ kind: "file", path: path.join(root, relative), root });
    expect(result).toMatchObject(expected);
  });

  it("gives the same answer for a link out whether or not its target exists", async () => {
    const target = path.join(outside, "appears.png");
    link(target, "appears.png");
    const read = () => fetcher().fetch({ kind: "file", path: path.join(root, "appears.png"), root });
    const missing = await read();
    writeFileSync(target, "now it exists");
    expect(await read()).toEqual(missing);
    expect(missing).toMatchObject(OUTSIDE);
  });

  it("reads through a root named by a link, and an absolute link target written through that name", async () => {
    const named = path.join(base, "root-name");
    symlinkSync(root, named);
    link(path.join(named, "sub", "in.png"), "via-name.png");
    const read = (relative: string) => fetcher().fetch({ kind: "file", path: path.join(named, relative), root: named });
    expect(await read("sub/in.png")).toMatchObject({ ok: true });
    expect(await read("via-name.png")).toMatchObject({ ok: true });
    expect(await read("gone-link.png")).toMatchObject(OUTSIDE);
  });
});
