/**
 * The download cache of fetched images: one entry per URL in a flat folder, named by the SHA-256
 * of the URL: `<hash>.bin` (the body) and `<hash>.json` (CacheMeta). Both are written to a
 * temporary name and renamed into place, the metadata last, so an entry is whole or fails its
 * size/hash check (and is then dropped). Writing is best-effort: a full disk or a read-only folder
 * only means nothing is cached. The cache never takes the project's last space: nothing is written
 * while the disk has less than CACHE_RESERVE_BYTES free after the write, or once the folder holds
 * its size limit (SEMSEARCH_IMAGE_CACHE_MB, default 1,024). Files are read only when they are regular
 * files (never a FIFO, device or link put in their place), of the size their metadata records.
 */
import { createHash } from "node:crypto";
import { statfsSync } from "node:fs";
import { mkdir, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import type { IncomingHttpHeaders } from "node:http";
import path from "node:path";
import { readRegularFile } from "../read-file.js";
import { abandonedTemporary, temporaryPath } from "../temporary-files.js";

/** Space left free on the disk after any cache write. */
export const CACHE_RESERVE_BYTES = 256 * 1024 * 1024;
/** The cache's default size limit. */
export const DEFAULT_CACHE_BYTES = 1024 * 1024 * 1024;
/** A metadata file is small; a larger one is damaged. */
const MAX_META_BYTES = 64 * 1024;
/** The cache size limit in bytes: SEMSEARCH_IMAGE_CACHE_MB (0 turns the cache off), else 1 GiB. */
export function cacheLimit(env: NodeJS.ProcessEnv = process.env): number {
  const mb = env.SEMSEARCH_IMAGE_CACHE_MB;
  return mb !== undefined && /^\d{1,7}$/.test(mb) ? Number(mb) * 1024 * 1024 : DEFAULT_CACHE_BYTES;
}

/** Validators are sent back as header values: only visible ASCII and spaces (no control characters). */
const HEADER_VALUE = /^[\x20-\x7e]{1,1024}$/;

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
    (meta.etag === undefined || (typeof meta.etag === "string" && HEADER_VALUE.test(meta.etag))) &&
    (meta.last_modified === undefined || (typeof meta.last_modified === "string" && HEADER_VALUE.test(meta.last_modified)))
  );
}

export class ImageCache {
  private ready = false;
  /** Bytes in the folder, counted when first written to, then kept up to date by this process. */
  private used: number | null = null;

  constructor(
    readonly dir: string,
    private readonly onError: (error: unknown) => void,
    private readonly limit = cacheLimit(),
  ) {}

  /** Counts the folder's bytes and removes temporary files whose writer is gone (killed mid-write). */
  private async survey(): Promise<number> {
    let total = 0;
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      const file = path.join(this.dir, name);
      if (abandonedTemporary(name)) {
        await rm(file, { force: true }).catch(() => {});
        continue;
      }
      total += (await stat(file).catch(() => null))?.size ?? 0;
    }
    return total;
  }

  /** Whether `bytes` more may be written: within the size limit, and leaving the disk its reserve. */
  private async room(bytes: number): Promise<boolean> {
    this.used ??= await this.survey();
    if (this.used + bytes > this.limit) return false;
    const space = statfsSync(this.dir);
    return space.bavail * space.bsize - bytes >= CACHE_RESERVE_BYTES;
  }

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
    // The first use surveys the folder (and removes what killed writers left), even if nothing is written.
    this.used ??= await this.survey();
    try {
      let meta: unknown;
      const metaRead = await readRegularFile(files.meta, MAX_META_BYTES, { noFollow: true });
      if ("bytes" in metaRead) {
        try {
          meta = JSON.parse(metaRead.bytes.toString("utf8"));
        } catch {
          // damaged: dropped below
        }
      }
      if (!isMeta(meta) || meta.url !== withoutCredentials(url)) return await this.drop(url);
      // Whole but over today's limit: not used, and the download will say why.
      if (meta.size > maxBytes) return null;
      const bodyRead = await readRegularFile(files.body, meta.size, { noFollow: true });
      if (!("bytes" in bodyRead)) return await this.drop(url);
      const body = bodyRead.bytes;
      if (body.byteLength !== meta.size || sha256(body) !== meta.sha256) return await this.drop(url);
      return { meta, body };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Missing, or a symbolic link put in a file's place (O_NOFOLLOW): not an entry.
      if (code === "ENOENT" || code === "ELOOP") return await this.drop(url);
      this.onError(error);
      return null;
    }
  }

  /** Removes a URL's entry (best-effort); returns null for `return await this.drop(…)`. */
  async drop(url: string): Promise<null> {
    const files = this.files(url);
    // `recursive`: a directory put in a file's place goes too (rm removes a symbolic link, not its target).
    await Promise.all([rm(files.meta, { force: true, recursive: true }), rm(files.body, { force: true, recursive: true })]).catch(this.onError);
    return null;
  }

  /** Stores a body and its validators for a URL, replacing any entry; failures go to onError only. */
  async store(url: string, body: Buffer, headers: IncomingHttpHeaders): Promise<void> {
    const files = this.files(url);
    const meta: CacheMeta = {
      url: withoutCredentials(url),
      ...(typeof headers.etag === "string" && HEADER_VALUE.test(headers.etag) ? { etag: headers.etag } : {}),
      ...(typeof headers["last-modified"] === "string" && HEADER_VALUE.test(headers["last-modified"]) ? { last_modified: headers["last-modified"] } : {}),
      ...(typeof headers["content-type"] === "string" ? { content_type: headers["content-type"] } : {}),
      size: body.byteLength,
      sha256: sha256(body),
      stored_at: new Date().toISOString(),
    };
    const metaText = JSON.stringify(meta);
    try {
      if (!this.ready) await mkdir(this.dir, { recursive: true });
      this.ready = true;
      if (!(await this.room(body.byteLength + metaText.length))) return;
      await writeAtomically(files.body, body);
      await writeAtomically(files.meta, metaText);
      this.used = (this.used ?? 0) + body.byteLength + metaText.length;
    } catch (error) {
      this.onError(error);
    }
  }
}

/** Writes a file under a temporary name in the same folder, then renames it into place. */
async function writeAtomically(file: string, data: string | Uint8Array): Promise<void> {
  const temporary = temporaryPath(file);
  try {
    await writeFile(temporary, data, { flag: "wx" });
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {});
    throw error;
  }
}
