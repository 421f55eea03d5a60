/**
 * The state store of a project in an S3 bucket (or an S3-compatible server), through the AWS SDK's
 * S3 client. Create-if-absent is a PUT with `If-None-Match: *` (answered 412 when the key exists);
 * nothing uses conditional replacement or deletion. The store's clock is read from the `Date` of its
 * answers, so that leases expire by one clock whatever the machines' clocks say.
 */
import type { S3Client } from "@aws-sdk/client-s3";
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { EnvironmentError } from "../errors.js";
import type { S3Config } from "./s3-config.js";
import { checkKey, type StateObject, type StateStore } from "./store.js";

type Sdk = typeof import("@aws-sdk/client-s3");

/** The SDK's error fields this code reads (its service exceptions and its network errors). */
interface SdkError {
  name?: string;
  code?: string;
  Code?: string;
  $metadata?: { httpStatusCode?: number };
}

const ACCESS = new Set(["InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "ExpiredToken", "InvalidToken", "TokenRefreshRequired", "AllAccessDisabled"]);
/** The user metadata (x-amz-meta-…) in which a create-if-absent marks its write. */
const WRITE_NONCE = "semsearch-write";
/** How long one request to the store may take (records are small), for each of the SDK's five attempts. */
const REQUEST_TIMEOUT_MS = 10_000;
const NETWORK = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EPIPE"]);

/**
 * The EnvironmentError (exit 6, HTTP 503) for a failed request to the store `where`, naming what
 * failed and never quoting what the server sent (a proxy's page, say).
 */
export function s3Fault(error: unknown, where: string, doing: string): EnvironmentError {
  const e = (error ?? {}) as SdkError;
  const name = e.name ?? e.Code ?? "";
  const status = e.$metadata?.httpStatusCode;
  const network = e.code !== undefined && NETWORK.has(e.code) ? e.code : null;
  const cause = { cause: error };
  if (name === "NoSuchBucket") {
    return new EnvironmentError("S3_NO_BUCKET", `The bucket of ${where} does not exist (${doing})`, { ...cause, hint: "Create the bucket first (semsearch does not: docs/deploy.md, \"Creating the bucket\", has the commands for AWS, MinIO and Ceph), or check the project's address and AWS_ENDPOINT_URL." });
  }
  if (ACCESS.has(name) || status === 403) {
    return new EnvironmentError("S3_ACCESS_DENIED", `The store refused the credentials or access for ${where} (${name || `HTTP ${status}`}, ${doing})`, {
      ...cause,
      hint: "Check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), and that they may read and write the bucket.",
    });
  }
  if (name === "CredentialsProviderError") {
    return new EnvironmentError("S3_NO_CREDENTIALS", `No credentials were found for ${where} (${doing})`, { ...cause, hint: "Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE." });
  }
  if (network !== null || name === "TimeoutError" || name === "RequestTimeout" || name === "AbortError") {
    return new EnvironmentError("S3_UNREACHABLE", `The store of ${where} cannot be reached (${network ?? name}, ${doing})`, { ...cause, hint: "Check AWS_ENDPOINT_URL and the network, then try again." });
  }
  if (status === 503 || name === "SlowDown" || name === "ServiceUnavailable") {
    return new EnvironmentError("S3_BUSY", `The store of ${where} is busy and asked to slow down, after retries (${doing})`, { ...cause, hint: "Try again in a moment." });
  }
  return new EnvironmentError("S3_ERROR", `The store of ${where} failed a request (${name || "error"}${status ? `, HTTP ${status}` : ""}, ${doing})`, { ...cause, hint: "Try again; if it persists, check the store's logs." });
}

interface ClientLimits {
  requestTimeoutMs?: number;
  maxAttempts?: number;
  checksumsWhenRequired?: boolean;
}

/** The SDK (loaded now: only remote projects pay for it) and a client for `config`. */
async function openClient(config: S3Config, limits: ClientLimits): Promise<{ sdk: Sdk; client: S3Client }> {
  // On Node 20 the SDK prints a warning that its releases from 2027 will need Node 22: a notice
  // for this project's dependency updates, not for the user, whose stderr it would clutter.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
  const sdk = await import("@aws-sdk/client-s3");
  const client = new sdk.S3Client({
    region: config.region,
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    forcePathStyle: config.forcePathStyle,
    maxAttempts: limits.maxAttempts ?? 5,
    ...(limits.checksumsWhenRequired ? { requestChecksumCalculation: "WHEN_REQUIRED" as const } : {}),
    // (without throwOnRequestTimeout the SDK only prints a warning, on stderr, and waits on: a
    // server that accepts and never answers hung a command for as long as it stayed so)
    requestHandler: { connectionTimeout: 5_000, requestTimeout: limits.requestTimeoutMs ?? REQUEST_TIMEOUT_MS, throwOnRequestTimeout: true },
  });
  return { sdk, client };
}

/** How large a file S3Files.write reads into memory before sending it (larger ones are streamed). */
const BUFFERED_BYTES = 256 * 1024 * 1024;

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A file of a tree of files (see S3Files): its key below the tree's folder, and its size in bytes. */
export interface TreeFile {
  key: string;
  size: number;
}

/**
 * The files under one folder of a bucket (a project's LanceDB tables, `<prefix>/data/`), as bytes:
 * what `semsearch project copy` reads and writes. Keys are relative to the folder, `/`-separated.
 */
export class S3Files {
  readonly where: string;

  private constructor(
    private readonly sdk: Sdk,
    private readonly client: S3Client,
    private readonly bucket: string,
    /** the folder, without slashes at either end */
    private readonly folder: string,
  ) {
    this.where = `s3://${bucket}/${folder}`;
  }

  static async open(bucket: string, folder: string, config: S3Config): Promise<S3Files> {
    // (a minute per request: a file may be large, and the timeout is the socket's idle time)
    // (a body streamed with the SDK's default checksum is sent in aws-chunked encoding, which some
    // S3-compatible servers refuse, Ceph RGW with 411: checksums only where the operation needs one)
    const { sdk, client } = await openClient(config, { requestTimeoutMs: 60_000, checksumsWhenRequired: true });
    return new S3Files(sdk, client, bucket, folder);
  }

  private async send<T>(doing: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw s3Fault(error, this.where, doing);
    }
  }

  /** Every file under the folder, in byte order of their keys. */
  async list(): Promise<TreeFile[]> {
    const start = `${this.folder}/`;
    const files: TreeFile[] = [];
    let token: string | undefined;
    do {
      const page = await this.send("listing files", () =>
        this.client.send(new this.sdk.ListObjectsV2Command({ Bucket: this.bucket, Prefix: start, ...(token ? { ContinuationToken: token } : {}) })),
      );
      for (const entry of page.Contents ?? []) if (entry.Key && entry.Key.length > start.length) files.push({ key: entry.Key.slice(start.length), size: entry.Size ?? 0 });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return files.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** The bytes of the file `key`, as a stream. */
  async read(key: string): Promise<Readable> {
    const answer = await this.send(`reading ${key}`, () => this.client.send(new this.sdk.GetObjectCommand({ Bucket: this.bucket, Key: `${this.folder}/${key}` })));
    if (!(answer.Body instanceof Readable)) throw new Error(`the store answered ${key} without a body`);
    return answer.Body;
  }

  /**
   * Writes the file `key` whole from `body` (`size` bytes; at most 5 GB, S3's limit for one PUT). A
   * file up to BUFFERED_BYTES is read into memory first, so that the SDK can send it again on a retry
   * (a stream it cannot).
   */
  async write(key: string, body: Readable, size: number): Promise<void> {
    const bytes = size <= BUFFERED_BYTES ? await readAll(body) : body;
    await this.send(`writing ${key}`, () => this.client.send(new this.sdk.PutObjectCommand({ Bucket: this.bucket, Key: `${this.folder}/${key}`, Body: bytes, ContentLength: size })));
  }

  /** Removes every file under the folder. */
  async clear(): Promise<void> {
    const files = await this.list();
    for (let at = 0; at < files.length; at += 8) {
      await Promise.all(files.slice(at, at + 8).map(({ key }) => this.send(`removing ${key}`, () => this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: `${this.folder}/${key}` })))));
    }
  }

  close(): void {
    this.client.destroy();
  }
}

export class S3StateStore implements StateStore {
  readonly where: string;
  /** The store's clock minus this machine's, from the newest answer's `Date` (0 until one arrives). */
  private skew = 0;

  private constructor(
    private readonly sdk: Sdk,
    private readonly client: S3Client,
    readonly bucket: string,
    /** the project's prefix, without slashes at either end ("" for the bucket's root) */
    private readonly prefix: string,
  ) {
    this.where = `s3://${bucket}${prefix ? `/${prefix}` : ""}`;
    client.middlewareStack.add(
      (next) => async (args) => {
        const result = await next(args);
        const date = (result.response as { headers?: Record<string, string> }).headers?.date;
        const at = date === undefined ? NaN : Date.parse(date);
        // (Date is whole seconds: the middle of its second is the best guess)
        if (Number.isFinite(at)) this.skew = at + 500 - Date.now();
        return result;
      },
      { step: "deserialize", name: "semsearchStoreClock" },
    );
  }

  /** A store for `s3://bucket/prefix`; loads the SDK (only remote projects pay for it). */
  static async open(bucket: string, prefix: string, config: S3Config, limits: ClientLimits = {}): Promise<S3StateStore> {
    const { sdk, client } = await openClient(config, limits);
    return new S3StateStore(sdk, client, bucket, prefix);
  }

  private key(key: string, folder = false): string {
    checkKey(key, folder);
    return this.prefix === "" ? key : key === "" ? this.prefix : `${this.prefix}/${key}`;
  }

  private async send<T>(doing: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw s3Fault(error, this.where, doing);
    }
  }

  async get(key: string): Promise<StateObject | null> {
    const name = this.key(key);
    try {
      const answer = await this.client.send(new this.sdk.GetObjectCommand({ Bucket: this.bucket, Key: name }));
      const body = (await answer.Body?.transformToString("utf8")) ?? "";
      return { body, writtenAt: answer.LastModified?.getTime() ?? (await this.now()) };
    } catch (error) {
      if ((error as SdkError).name === "NoSuchKey" || (error as SdkError).$metadata?.httpStatusCode === 404) {
        if ((error as SdkError).name === "NoSuchBucket") throw s3Fault(error, this.where, `reading ${key}`);
        return null;
      }
      throw s3Fault(error, this.where, `reading ${key}`);
    }
  }

  /**
   * Create-if-absent. Each call marks its write with a nonce of its own (user metadata): when the
   * store wrote a PUT whose answer was lost (a reset connection, a timeout), the SDK's retry is
   * answered 412, and only the nonce tells that write from another writer's. Taken for another's, a
   * record change would be applied twice and a lease this process holds be waited for as if another
   * held it.
   */
  async createIfAbsent(key: string, body: string): Promise<boolean> {
    const name = this.key(key);
    const nonce = randomBytes(12).toString("hex");
    for (let attempt = 0; ; attempt++) {
      try {
        // (the length given: for an empty body the SDK would otherwise print a warning on stderr)
        const bytes = Buffer.from(body, "utf8");
        await this.client.send(
          new this.sdk.PutObjectCommand({ Bucket: this.bucket, Key: name, Body: bytes, ContentLength: bytes.length, IfNoneMatch: "*", ContentType: "application/json", Metadata: { [WRITE_NONCE]: nonce } }),
        );
        return true;
      } catch (error) {
        const status = (error as SdkError).$metadata?.httpStatusCode;
        if (status === 412) return this.writtenBy(name, key, nonce);
        // 409: a concurrent conditional write of the key is under way; its outcome decides, so look again.
        if (status === 409 && attempt < 5) {
          await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));
          continue;
        }
        throw s3Fault(error, this.where, `writing ${key}`);
      }
    }
  }

  /** Whether the object at `name` was written by the create-if-absent that used `nonce`. */
  private async writtenBy(name: string, key: string, nonce: string): Promise<boolean> {
    try {
      const head = await this.client.send(new this.sdk.HeadObjectCommand({ Bucket: this.bucket, Key: name }));
      return head.Metadata?.[WRITE_NONCE] === nonce;
    } catch (error) {
      const e = error as SdkError;
      if (e.$metadata?.httpStatusCode === 404 && e.name !== "NoSuchBucket") return false; // removed since: not this write's to claim
      throw s3Fault(error, this.where, `reading ${key}`);
    }
  }

  async list(folder: string, after?: string, limit?: number): Promise<string[]> {
    const start = `${this.key(folder, true)}${folder === "" && this.prefix === "" ? "" : "/"}`;
    const names: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.send(`listing ${folder || "the project"}`, () =>
        this.client.send(
          new this.sdk.ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: start,
            Delimiter: "/",
            ...(limit !== undefined ? { MaxKeys: Math.min(1000, Math.max(1, limit)) } : {}),
            ...(token ? { ContinuationToken: token } : after !== undefined ? { StartAfter: `${start}${after}` } : {}),
          }),
        ),
      );
      for (const entry of page.Contents ?? []) if (entry.Key) names.push(entry.Key.slice(start.length));
      for (const entry of page.CommonPrefixes ?? []) if (entry.Prefix) names.push(entry.Prefix.slice(start.length, -1));
      token = page.IsTruncated && (limit === undefined || names.length < limit) ? page.NextContinuationToken : undefined;
    } while (token);
    return names
      .filter((name) => name !== "" && !name.startsWith(".") && (after === undefined || name > after))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      .slice(0, limit);
  }

  async remove(key: string): Promise<void> {
    const name = this.key(key);
    await this.send(`removing ${key}`, () => this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: name })));
  }

  async now(): Promise<number> {
    return Date.now() + this.skew;
  }

  /**
   * Checks once that the store honours create-if-absent, which LanceDB's commits and the leases
   * depend on: a key written twice with `If-None-Match: *` must be refused the second time.
   * EnvironmentError STORE_NOT_CONDITIONAL (exit 6) otherwise, before the project is written to.
   */
  async checkConditionalWrites(): Promise<void> {
    const key = `probe/${Date.now()}-${randomBytes(6).toString("hex")}`;
    const first = await this.createIfAbsent(key, "{}");
    const second = first && (await this.createIfAbsent(key, "{}"));
    await this.remove(key);
    if (!first || second) {
      throw new EnvironmentError("STORE_NOT_CONDITIONAL", `The store of ${this.where} does not honour create-if-absent writes (If-None-Match: *): ${first ? "a second write of one key was accepted" : "a first write of a new key was refused"}`, {
        hint: "semsearch's leases and LanceDB's commits need a store that refuses the second write (AWS S3, Ceph RGW and MinIO do); use such a store, or a local directory.",
      });
    }
  }

  close(): void {
    this.client.destroy();
  }
}
