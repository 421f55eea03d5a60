/**
 * The download cache of fetched images: one entry per URL in a flat folder, named by the SHA-256
 * of the URL: `<hash>.bin` (the body) and `<hash>.json` (CacheMeta). Both are written to a
 * temporary name and renamed into place, the metadata last, so an entry is whole or fails its
 * size/hash check (and is then dropped). Writing is best-effort: a full disk or a read-only folder
 * only means nothing is cached.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import type { IncomingHttpHeaders } from "node:http";
import path from "node:path";

export interface CacheMeta {
  /** the URL without credentials */
  url: string;
  etag?: string;
  last_modified?: string;
  content_type?: string;
  /** bytes of the body */
  size: number;
  /** hex SHA-256 of the body */
  sha256: string;
  /** ISO time the entry was written */
  stored_at: string;
}

export interface CacheEntry {
  meta: CacheMeta;
  body: Buffer;
}

function sha256(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** A URL without its `user:password@`, for the metadata (the cache key keeps them). */
function withoutCredentials(url: string): string {
  const parsed = new URL(url);
  parsed.username = "";
  parsed.password = "";
  return parsed.href;
}

function isMeta(value: unknown): value is CacheMeta {
  const meta = value as Partial<CacheMeta> | null;
  return (
    typeof meta === "object" && meta !== null &&
    typeof meta.url === "string" && Number.isSafeInteger(meta.size) && (meta.size as number) >= 0 &&
    typeof meta.sha256 === "string" && /^[0-9a-f]{64}$/.test(meta.sha256) &&
    (meta.etag === undefined || typeof meta.etag === "string") &&
    (meta.last_modified === undefined || typeof meta.last_modified === "string")
  );
}

export class ImageCache {
  private ready = false;

  constructor(
    readonly dir: string,
    private readonly onError: (error: unknown) => void,
  ) {}

  private files(url: string): { body: string; meta: string } {
    const key = sha256(url);
    return { body: path.join(this.dir, `${key}.bin`), meta: path.join(this.dir, `${key}.json`) };
  }

  /**
   * The entry for a URL when it is whole: metadata for this URL, a body of the recorded size (at
   * most `maxBytes`) and hash. A damaged entry is removed; a missing or unreadable one is null.
   */
  async load(url: string, maxBytes: number): Promise<CacheEntry | null> {
    const files = this.files(url);
    try {
      let meta: unknown;
      try {
        meta = JSON.parse(await readFile(files.meta, "utf8"));
      } catch (error) {
        if (!(error instanceof SyntaxError)) throw error;
      }
      if (!isMeta(meta) || meta.url !== withoutCredentials(url)) return await this.drop(url);
      // Whole but over today's limit: not used, and the download will say why.
      if (meta.size > maxBytes) return null;
      const body = await readFile(files.body);
      if (body.byteLength !== meta.size || sha256(body) !== meta.sha256) return await this.drop(url);
      return { meta, body };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return await this.drop(url);
      this.onError(error);
      return null;
    }
  }

  /** Removes a URL's entry (best-effort); returns null for `return await this.drop(…)`. */
  async drop(url: string): Promise<null> {
    const files = this.files(url);
    await Promise.all([rm(files.meta, { force: true }), rm(files.body, { force: true })]).catch(this.onError);
    return null;
  }

  /** Stores a body and its validators for a URL, replacing any entry; failures go to onError only. */
  async store(url: string, body: Buffer, headers: IncomingHttpHeaders): Promise<void> {
    const files = this.files(url);
    const meta: CacheMeta = {
      url: withoutCredentials(url),
      ...(typeof headers.etag === "string" ? { etag: headers.etag } : {}),
      ...(typeof headers["last-modified"] === "string" ? { last_modified: headers["last-modified"] } : {}),
      ...(typeof headers["content-type"] === "string" ? { content_type: headers["content-type"] } : {}),
      size: body.byteLength,
      sha256: sha256(body),
      stored_at: new Date().toISOString(),
    };
    try {
      if (!this.ready) await mkdir(this.dir, { recursive: true });
      this.ready = true;
      await writeAtomically(files.body, body);
      await writeAtomically(files.meta, JSON.stringify(meta));
    } catch (error) {
      this.onError(error);
    }
  }
}

/** Writes a file under a temporary name in the same folder, then renames it into place. */
async function writeAtomically(file: string, data: string | Uint8Array): Promise<void> {
  const temporary = `${file}.tmp-${process.pid}-${randomBytes(6).toString("hex")}`;
  try {
    await writeFile(temporary, data, { flag: "wx" });
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {});
    throw error;
  }
}
