/**
 * Fetching the bytes of an image reference (reference.ts): a local file or an http(s) URL. Every
 * problem with one image — a bad status, a timeout, too large, a missing file — is a FetchResult
 * with a short reason for a person, never an exception; only misuse (a relative path, bad
 * options) throws. Downloads are retried with backoff, limited in number at a time, and kept in
 * an optional cache (fetch-cache.ts) revalidated with ETag / Last-Modified.
 */
import http from "node:http";
import https from "node:https";
import { createRequire } from "node:module";
import type { LookupFunction } from "node:net";
import path from "node:path";
import { ImageCache, type CacheEntry } from "./fetch-cache.js";
import { readRegularFile } from "../read-file.js";
import { OUTSIDE_ROOT } from "./reference.js";
import { resolveConfined, type ConfinedPath } from "./confined-path.js";
import { formatBytes, httpGet, type HttpContext, type HttpOutcome } from "./fetch-http.js";
import type { ImageReference } from "./reference.js";

export type FetchResult = { ok: true; bytes: Buffer; fromCache: boolean } | { ok: false; reason: string; retryable: boolean };

export interface FetchOptions {
  /** folder of the download cache (HTTP only), created when first written; null: no cache */
  cacheDir: string | null;
  /** largest image accepted, in bytes (default 20 MiB; SEMSEARCH_IMAGE_MAX_BYTES) */
  maxBytes: number;
  /** ms to wait for a TCP connection, DNS included (default 10 s) */
  connectTimeoutMs: number;
  /** ms for one try at a download, redirects and body included (default 30 s; SEMSEARCH_IMAGE_TIMEOUT in seconds) */
  timeoutMs: number;
  /** redirects followed per try (default 5) */
  maxRedirects: number;
  /** tries after the first on timeouts, resets, refused connections, 5xx and 429 (default 2) */
  retries: number;
  /** ms before the first retry, doubled for each next one (default 500; SEMSEARCH_IMAGE_RETRY_DELAY_MS) */
  retryDelayMs: number;
  /** HTTP requests in flight at once per fetcher (default 8); local reads are not counted */
  concurrency: number;
  /** called when the cache cannot be read or written (the fetch goes on without it) */
  onCacheError?: (error: unknown) => void;
  /** DNS lookup for HTTP hosts (default: the system's), e.g. to pin or filter addresses */
  lookup?: LookupFunction;
}

export const DEFAULT_MAX_IMAGE_BYTES = 20 * 1024 * 1024;
export const DEFAULT_IMAGE_TIMEOUT_MS = 30_000;
export const MAX_IMAGE_TIMEOUT_MS = 3_600_000;
/** Retry-After is honoured up to this many ms. */
export const RETRY_AFTER_CAP_MS = 30_000;

/** The defaults, with SEMSEARCH_IMAGE_TIMEOUT / _MAX_BYTES / _RETRY_DELAY_MS applied when valid. */
export function defaultFetchOptions(cacheDir: string | null, env: NodeJS.ProcessEnv = process.env): FetchOptions {
  // At most an hour: timers cannot wait longer than 2^31 ms, and no image download should.
  const seconds = /^\d+(\.\d+)?$/.test(env.SEMSEARCH_IMAGE_TIMEOUT ?? "") ? Math.min(Math.round(Number(env.SEMSEARCH_IMAGE_TIMEOUT) * 1000), MAX_IMAGE_TIMEOUT_MS) : 0;
  const maxBytes = /^\d+$/.test(env.SEMSEARCH_IMAGE_MAX_BYTES ?? "") ? Number(env.SEMSEARCH_IMAGE_MAX_BYTES) : 0;
  const delay = /^\d+$/.test(env.SEMSEARCH_IMAGE_RETRY_DELAY_MS ?? "") ? Number(env.SEMSEARCH_IMAGE_RETRY_DELAY_MS) : -1;
  return {
    cacheDir,
    maxBytes: Number.isSafeInteger(maxBytes) && maxBytes > 0 ? Math.min(maxBytes, 1024 * 1024 * 1024) : DEFAULT_MAX_IMAGE_BYTES,
    connectTimeoutMs: 10_000,
    timeoutMs: Number.isSafeInteger(seconds) && seconds > 0 ? seconds : DEFAULT_IMAGE_TIMEOUT_MS,
    maxRedirects: 5,
    retries: 2,
    retryDelayMs: Number.isSafeInteger(delay) && delay >= 0 ? Math.min(delay, 60_000) : 500,
    concurrency: 8,
  };
}

function userAgent(): string {
  try {
    const pkg = createRequire(import.meta.url)("../../../package.json") as { version?: unknown };
    return typeof pkg.version === "string" ? `semsearch/${pkg.version}` : "semsearch";
  } catch {
    return "semsearch";
  }
}

const USER_AGENT = userAgent();

/** At most `size` tasks at once; the others wait in order. */
export class Slots {
  private readonly waiting: (() => void)[] = [];
  constructor(private free: number) {}

  async use<T>(task: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  }
}

function checkOptions(options: FetchOptions): void {
  const whole = (value: number, min: number) => Number.isSafeInteger(value) && value >= min;
  const minimums = [["maxBytes", 1], ["connectTimeoutMs", 1], ["timeoutMs", 1], ["maxRedirects", 0], ["retries", 0], ["retryDelayMs", 0], ["concurrency", 1]] as const;
  const bad = minimums.find(([key, min]) => !whole(options[key], min));
  if (bad) throw new RangeError(`ImageFetcher: ${bad[0]} must be an integer ≥ ${bad[1]}, got ${String(options[bad[0]])}`);
}

const failed = (reason: string, retryable = false): FetchResult => ({ ok: false, reason, retryable });

/** The reasons of files an object confined to a root cannot have (the same for a link out whether or not its target exists). */
const CONFINED_PROBLEMS = { outside: OUTSIDE_ROOT, missing: "file not found", loop: "too many symbolic links" } as const;

export class ImageFetcher {
  private readonly cache: ImageCache | null;
  private readonly slots: Slots;
  private readonly agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

  constructor(private readonly options: FetchOptions) {
    checkOptions(options);
    this.cache = options.cacheDir === null ? null : new ImageCache(options.cacheDir, options.onCacheError ?? (() => {}));
    this.slots = new Slots(options.concurrency);
  }

  /**
   * The bytes of an image, or why not. Throws only for a malformed reference (a bug of the caller).
   * Once `signal` aborts, a download in progress is abandoned (its connection closed) and the
   * result is the failure "cancelled".
   */
  async fetch(ref: ImageReference, signal?: AbortSignal): Promise<FetchResult> {
    if (signal?.aborted) return failed("cancelled");
    if (ref.kind === "file") {
      if (!path.isAbsolute(ref.path)) throw new TypeError(`ImageFetcher: the path "${ref.path}" is not absolute`);
      if (ref.root === undefined) return readLocalImage(ref.path, this.options.maxBytes);
      let confined: ConfinedPath;
      try {
        confined = await resolveConfined(ref.path, ref.root);
      } catch (error) {
        return localFailure(error);
      }
      if ("problem" in confined) return failed(CONFINED_PROBLEMS[confined.problem]);
      return readLocalImage(confined.real, this.options.maxBytes, true);
    }
    if (ref.kind === "http" && /^https?:\/\//i.test(ref.url) && URL.canParse(ref.url)) return this.download(ref.url, signal);
    throw new TypeError(`ImageFetcher: not an image reference: ${JSON.stringify(ref)?.slice(0, 200)}`);
  }

  /** Closes kept-alive connections. */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /**
   * A download, revalidating a cached copy when there is one: on 304 the cached bytes are used.
   * When the server cannot be reached at all (DNS, refused, reset, timed out), after the retries,
   * a cached copy is used too (`fromCache: true`), so indexing works offline with what was seen.
   */
  private async download(url: string, signal: AbortSignal | undefined): Promise<FetchResult> {
    const { maxBytes, retries } = this.options;
    const cached = this.cache ? await this.cache.load(url, maxBytes) : null;
    const context: HttpContext = { limits: this.options, headers: requestHeaders(cached), agents: this.agents, ...(this.options.lookup ? { lookup: this.options.lookup } : {}), ...(signal ? { signal } : {}) };
    for (let tries = 1; ; tries++) {
      if (signal?.aborted) return failed("cancelled");
      const outcome = await this.slots.use(() => httpGet(url, context));
      if (signal?.aborted) return failed("cancelled");
      if (outcome.type === "response" && outcome.body) {
        if (outcome.body.byteLength === 0) return failed("empty response");
        await this.cache?.store(url, outcome.body, outcome.headers);
        return { ok: true, bytes: outcome.body, fromCache: false };
      }
      if (outcome.type === "response" && outcome.status === 304 && cached) return { ok: true, bytes: cached.body, fromCache: true };
      const retryable = outcome.type === "failure" ? outcome.retryable : outcome.status >= 500 || outcome.status === 429;
      if (retryable && tries <= retries) {
        await sleep(this.delayBefore(tries, outcome));
        continue;
      }
      if (outcome.type === "failure" && outcome.unreachable && cached) return { ok: true, bytes: cached.body, fromCache: true };
      const reason = outcome.type === "failure" ? outcome.reason : `HTTP ${outcome.status}`;
      return failed(tries > 1 ? `${reason} (after ${tries} tries)` : reason, retryable);
    }
  }

  /** Exponential backoff with a little jitter, or the server's Retry-After (capped) when longer. */
  private delayBefore(tries: number, outcome: HttpOutcome): number {
    const backoff = this.options.retryDelayMs * 2 ** (tries - 1) * (1 + Math.random() * 0.1);
    const asked = outcome.type === "response" ? retryAfterMs(outcome.headers["retry-after"]) : null;
    return Math.min(Math.max(backoff, asked ?? 0), Math.max(RETRY_AFTER_CAP_MS, backoff));
  }
}

function requestHeaders(cached: CacheEntry | null): Record<string, string> {
  return {
    accept: "image/*",
    "accept-encoding": "identity",
    "user-agent": USER_AGENT,
    ...(cached?.meta.etag ? { "if-none-match": cached.meta.etag } : {}),
    ...(cached?.meta.last_modified ? { "if-modified-since": cached.meta.last_modified } : {}),
  };
}

/** Retry-After in ms: delay-seconds or an HTTP date; null when absent or unreadable. */
function retryAfterMs(header: string | undefined): number | null {
  if (header === undefined) return null;
  if (/^\s*\d+\s*$/.test(header)) return Number(header) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A local image read whole: regular files only (opened non-blocking, so a FIFO cannot hang the
 * read), the size checked before reading.
 */
async function readLocalImage(file: string, maxBytes: number, noFollow = false): Promise<FetchResult> {
  try {
    const read = await readRegularFile(file, maxBytes, { noFollow });
    if ("problem" in read) return failed(read.problem === "directory" ? "is a directory" : read.problem === "not regular" ? "not a regular file" : `larger than ${formatBytes(maxBytes)}`);
    return read.bytes.byteLength === 0 ? failed("empty file") : { ok: true, bytes: read.bytes, fromCache: false };
  } catch (error) {
    return localFailure(error);
  }
}

/** A file-system error as a reason, by its system code. */
function localFailure(error: unknown): FetchResult {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  switch (code) {
    case "ENOENT":
    case "ENOTDIR":
      return failed("file not found");
    case "EACCES":
    case "EPERM":
      return failed("permission denied");
    case "EISDIR":
      return failed("is a directory");
    case "ELOOP":
      return failed("too many symbolic links");
    case "ENAMETOOLONG":
      return failed("path too long");
    case "EMFILE":
    case "ENFILE":
      return failed("too many open files", true);
    case "EIO":
      return failed("input/output error", true);
    default:
      if (code === undefined) throw error;
      return failed(`cannot read the file (${code})`);
  }
}

