/**
 * Downloading models from the Hugging Face hub (or a mirror: `SEMSEARCH_HF_ENDPOINT`, else
 * `HF_ENDPOINT`). The file list, sizes and hashes come from the hub's model API at one commit;
 * every file is streamed to `<file>.part`, resumed with an HTTP range request after an
 * interruption, and checked against the hub's size and hash (SHA-256 for LFS files, the git blob
 * id otherwise) before it is renamed into place. A server that sends nothing for the stall timeout
 * is given up on; running the command again resumes.
 */
import { createHash, type Hash } from "node:crypto";
import { createReadStream, existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import { EnvironmentError, NotFoundError, SemsearchError, ValidationError } from "../errors.js";
import { withLock } from "../lock.js";
import { modelsFsError, readManifest, revisionDir, writeManifest, type Manifest } from "./model-cache.js";
import { CLIP_WEIGHTS_FILES, MODEL_DTYPES, weightsFiles, WEIGHTS_FILES, type ModelDtype, type ModelKind } from "./model-spec.js";

export interface HubFile {
  path: string;
  size: number;
  sha256?: string;
  /** git blob id (SHA-1 of `blob <size>\0<content>`), for files not stored in LFS */
  blob?: string;
}

export interface HubModel {
  id: string;
  /** the commit */
  revision: string;
  files: HubFile[];
}

export interface DownloadProgress {
  file: string;
  /** bytes of all chosen files already on disk */
  done: number;
  total: number;
}

export interface DownloadOptions {
  /** ms without a byte from the server before giving up (default 30 s; SEMSEARCH_DOWNLOAD_TIMEOUT) */
  stallMs?: number;
  onProgress?: (progress: DownloadProgress) => void;
}

export function hubEndpoint(): string {
  return (process.env.SEMSEARCH_HF_ENDPOINT || process.env.HF_ENDPOINT || "https://huggingface.co").replace(/\/+$/, "");
}

function stallTimeout(options: DownloadOptions): number {
  const configured = Number(process.env.SEMSEARCH_DOWNLOAD_TIMEOUT);
  return options.stallMs ?? (Number.isInteger(configured) && configured > 0 ? configured : 30_000);
}

function headers(): Record<string, string> {
  const token = process.env.HF_TOKEN || process.env.HUGGING_FACE_HUB_TOKEN;
  return { "user-agent": "semsearch", ...(token ? { authorization: `Bearer ${token}` } : {}) };
}

const WAYS_OUT = (id: string) =>
  `On a connected machine run \`semsearch models pull ${id}\` and copy its models folder here (SEMSEARCH_MODELS), or pass --model a local folder holding the model in transformers.js layout.`;

function unreachable(id: string, url: string, error: unknown): EnvironmentError {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const why = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
  return new EnvironmentError("MODEL_DOWNLOAD_FAILED", `Cannot download the model ${id}: ${new URL(url).host} is not reachable (${why})`, { hint: WAYS_OUT(id), cause: error });
}

/** The model API's answer at most this large. */
const MAX_INFO_BYTES = 64 * 1024 * 1024;

/** A response body as text, giving up when nothing arrives for `stallMs` or it grows past MAX_INFO_BYTES. */
async function readBody(id: string, response: Response, stallMs: number): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const chunk = await readWithin(reader, stallMs, () => new EnvironmentError("MODEL_DOWNLOAD_STALLED", `The hub's answer for ${id} stalled: nothing received for ${Math.round(stallMs / 1000)} s`, { hint: "Run the command again later (SEMSEARCH_DOWNLOAD_TIMEOUT sets the wait in ms)." }));
      if (chunk.done) break;
      size += chunk.value.byteLength;
      if (size > MAX_INFO_BYTES) throw new EnvironmentError("MODEL_DOWNLOAD_FAILED", `The hub's answer for ${id} is larger than ${MAX_INFO_BYTES / 1024 / 1024} MB`);
      chunks.push(chunk.value);
    }
  } catch (error) {
    await reader.cancel().catch(() => {});
    if (error instanceof SemsearchError) throw error;
    throw unreachable(id, response.url || hubEndpoint(), error);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The next chunk of a stream, or the error `stalled()` when none comes within `ms`. */
async function readWithin(reader: ReadableStreamDefaultReader<Uint8Array>, ms: number, stalled: () => SemsearchError): Promise<Awaited<ReturnType<typeof reader.read>>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(stalled()), ms);
  });
  try {
    return await Promise.race([reader.read(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** fetch with a deadline for the response headers. */
async function request(id: string, url: string, init: { headers?: Record<string, string> }, stallMs: number): Promise<Response> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no answer in ${stallMs} ms`)), stallMs);
  try {
    return await fetch(url, { headers: { ...headers(), ...init.headers }, signal: controller.signal, redirect: "follow" });
  } catch (error) {
    throw unreachable(id, url, controller.signal.aborted ? controller.signal.reason : error);
  } finally {
    clearTimeout(timer);
  }
}

interface ApiSibling {
  rfilename?: unknown;
  size?: unknown;
  blobId?: unknown;
  lfs?: { sha256?: unknown; size?: unknown };
}

/** The files of a model at a revision (default `main`), from the hub's model API. */
export async function fetchModelInfo(id: string, revision = "main", options: DownloadOptions = {}): Promise<HubModel> {
  const url = `${hubEndpoint()}/api/models/${id}/revision/${encodeURIComponent(revision)}?blobs=true`;
  const response = await request(id, url, {}, stallTimeout(options));
  if (response.status === 404 || response.status === 401) {
    await response.body?.cancel();
    throw new NotFoundError("MODEL_NOT_FOUND", `The hub has no model "${id}"${revision === "main" ? "" : ` at revision ${revision}`}`, {
      hint: "Check the id on huggingface.co (owner/name, e.g. Xenova/all-MiniLM-L6-v2); `semsearch models list` shows the known models. A private model needs HF_TOKEN.",
      issues: [{ path: "configuration.model", message: `no model "${id}" on the hub` }],
    });
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new EnvironmentError("MODEL_DOWNLOAD_FAILED", `Cannot download the model ${id}: the hub answered ${response.status} ${response.statusText}`, { hint: WAYS_OUT(id) });
  }
  let body: unknown;
  try {
    body = JSON.parse(await readBody(id, response, stallTimeout(options)));
  } catch (error) {
    if (error instanceof SemsearchError) throw error;
    throw new EnvironmentError("MODEL_DOWNLOAD_FAILED", `Cannot download the model ${id}: the hub's answer is not JSON`, { cause: error });
  }
  const answer = (typeof body === "object" && body !== null ? body : {}) as { sha?: unknown; siblings?: unknown };
  if (typeof answer.sha !== "string" || !/^[0-9a-f]{7,64}$/.test(answer.sha) || !Array.isArray(answer.siblings)) {
    throw new EnvironmentError("MODEL_DOWNLOAD_FAILED", `Cannot download the model ${id}: the hub's answer has no commit or file list`);
  }
  const files: HubFile[] = [];
  for (const entry of answer.siblings as unknown[]) {
    if (typeof entry !== "object" || entry === null) continue;
    const sibling = entry as ApiSibling;
    if (typeof sibling.rfilename !== "string" || sibling.rfilename.split("/").some((part) => part === "" || part === "." || part === "..")) continue;
    const lfs = typeof sibling.lfs === "object" && sibling.lfs !== null ? sibling.lfs : undefined;
    const size = typeof lfs?.size === "number" ? lfs.size : sibling.size;
    if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) continue;
    const sha256 = typeof lfs?.sha256 === "string" && /^[0-9a-f]{64}$/i.test(lfs.sha256) ? lfs.sha256.toLowerCase() : undefined;
    const blob = !lfs && typeof sibling.blobId === "string" && /^[0-9a-f]{40}$/i.test(sibling.blobId) ? sibling.blobId.toLowerCase() : undefined;
    files.push({ path: sibling.rfilename, size, ...(sha256 ? { sha256 } : blob ? { blob } : {}) });
  }
  return { id, revision: answer.sha, files };
}

const TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json"];
const OPTIONAL_FILES = ["special_tokens_map.json"];
export { WEIGHTS_FILES };

/**
 * What the files of a model say it is: `clip` when it has a text and a vision tower in Xenova's layout
 * (onnx/text_model*.onnx and onnx/vision_model*.onnx), else a text model.
 */
export function modelKind(has: (file: string) => boolean): ModelKind {
  const towers = (tower: "text" | "vision") => MODEL_DTYPES.some((dtype) => has(CLIP_WEIGHTS_FILES[tower][dtype]));
  return towers("text") && towers("vision") ? "clip" : "text";
}

/** The dtype to use: the one asked for, else q8 where the model offers it (every tower), else fp32. */
export function chooseDtype(available: (file: string) => boolean, asked?: ModelDtype, kind?: ModelKind): ModelDtype | null {
  const offers = (dtype: ModelDtype) => weightsFiles(kind, dtype).every(available);
  if (asked) return offers(asked) ? asked : null;
  if (offers("q8")) return "q8";
  return offers("fp32") ? "fp32" : null;
}

/** The files a model needs at a dtype: config, tokenizer (and image preprocessing for CLIP), weights (and external weight data). */
export function filesFor(model: HubModel, dtype: ModelDtype, kind: ModelKind = "text"): HubFile[] {
  const byPath = new Map(model.files.map((file) => [file.path, file]));
  const required = ["config.json", ...TOKENIZER_FILES, ...(kind === "clip" ? ["preprocessor_config.json"] : [])];
  const wanted = [...required, ...OPTIONAL_FILES];
  for (const weights of weightsFiles(kind, dtype)) {
    wanted.push(weights);
    for (const file of model.files) if (file.path.startsWith(`${weights}_data`)) wanted.push(file.path);
  }
  const missing = required.filter((file) => !byPath.has(file));
  if (missing.length) {
    throw new ValidationError("MODEL_UNSUPPORTED", `The model ${model.id} cannot be used: it has no ${missing.join(", ")}`, {
      hint: "semsearch runs ONNX feature-extraction models in transformers.js layout (e.g. the Xenova/… conversions).",
      issues: [{ path: "configuration.model", message: `missing ${missing.join(", ")}` }],
    });
  }
  const chosen = wanted.flatMap((file) => byPath.get(file) ?? []);
  const unchecked = chosen.filter((file) => !file.sha256 && !file.blob);
  if (unchecked.length) {
    throw new EnvironmentError("MODEL_DOWNLOAD_CORRUPT", `The hub lists ${unchecked.map((file) => file.path).join(", ")} of ${model.id} without a usable hash: refusing to download files that cannot be checked`, {
      hint: "The server is not a Hugging Face hub or is altering its answers; check SEMSEARCH_HF_ENDPOINT / HF_ENDPOINT.",
    });
  }
  return chosen;
}

class Hashes {
  readonly sha256: Hash = createHash("sha256");
  readonly blob: Hash;
  constructor(size: number) {
    this.blob = createHash("sha1").update(`blob ${size}\0`);
  }
  update(chunk: Uint8Array): void {
    this.sha256.update(chunk);
    this.blob.update(chunk);
  }
}

/** What differs between a file's hashes and the hub's listing, or null when they agree. */
function hashMismatch(file: HubFile, hashes: Hashes): string | null {
  if (file.sha256) return hashes.sha256.digest("hex") === file.sha256 ? null : "its SHA-256 differs";
  if (file.blob) return hashes.blob.digest("hex") === file.blob ? null : "its git blob id differs";
  return null;
}

/** Whether a file is in place already, whole and with the listed hash (from a download cut short before its manifest was written). */
async function alreadyWhole(file: HubFile, target: string): Promise<boolean> {
  const stat = statSync(target, { throwIfNoEntry: false });
  if (!stat?.isFile() || stat.size !== file.size) return false;
  const hashes = new Hashes(file.size);
  await hashExisting(target, hashes);
  return hashMismatch(file, hashes) === null;
}

async function hashExisting(file: string, hashes: Hashes): Promise<void> {
  for await (const chunk of createReadStream(file)) hashes.update(chunk as Buffer);
}

function corrupt(id: string, file: HubFile, what: string): EnvironmentError {
  return new EnvironmentError("MODEL_DOWNLOAD_CORRUPT", `The download of ${id}/${file.path} is not what the hub lists: ${what}; the partial file was removed`, {
    hint: "Run the command again to download it afresh; if it happens again, the server or a proxy is altering the file.",
  });
}

/** Downloads (or resumes) one file into place, checked. Returns nothing; throws SemsearchError. */
async function downloadFile(model: HubModel, file: HubFile, dir: string, options: DownloadOptions, report: (bytes: number) => void): Promise<void> {
  const target = path.join(dir, file.path);
  const part = `${target}.part`;
  try {
    mkdirSync(path.dirname(target), { recursive: true });
  } catch (error) {
    throw modelsFsError(error, "create", path.dirname(target));
  }
  let start = existsSync(part) ? statSync(part).size : 0;
  if (start > file.size) {
    rmSync(part, { force: true });
    start = 0;
  }
  let hashes = new Hashes(file.size);
  if (start > 0) await hashExisting(part, hashes);
  report(start);
  const stallMs = stallTimeout(options);
  const url = `${hubEndpoint()}/${model.id}/resolve/${model.revision}/${file.path.split("/").map(encodeURIComponent).join("/")}`;
  if (start < file.size) {
    const response = await request(model.id, url, start > 0 ? { headers: { range: `bytes=${start}-` } } : {}, stallMs);
    if (response.status === 404) {
      await response.body?.cancel();
      throw new EnvironmentError("MODEL_DOWNLOAD_FAILED", `Cannot download ${model.id}/${file.path}: the hub listed it but answered 404`, { hint: "Run the command again; the model may have changed on the hub." });
    }
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw new EnvironmentError("MODEL_DOWNLOAD_FAILED", `Cannot download ${model.id}/${file.path}: the hub answered ${response.status} ${response.statusText}`, { hint: "Run the command again to resume." });
    }
    let handle;
    if (start > 0 && response.status !== 206) {
      // The server ignored the range: start over.
      start = 0;
      hashes = new Hashes(file.size);
      report(0);
    }
    try {
      handle = await open(part, start > 0 ? "a" : "w");
    } catch (error) {
      await response.body.cancel();
      throw modelsFsError(error, "write", part);
    }
    let received = start;
    const reader = response.body.getReader();
    try {
      for (;;) {
        const chunk = await readWithin(reader, stallMs, () => new EnvironmentError("MODEL_DOWNLOAD_STALLED", `The download of ${model.id}/${file.path} stalled: nothing received for ${Math.round(stallMs / 1000)} s (${received} of ${file.size} bytes kept)`, { hint: "Run the command again to resume where it stopped (SEMSEARCH_DOWNLOAD_TIMEOUT sets the wait in ms)." }));
        if (chunk.done) break;
        received += chunk.value.byteLength;
        if (received > file.size) throw corrupt(model.id, file, `more than the ${file.size} bytes listed`);
        hashes.update(chunk.value);
        try {
          // A write may take only part of the chunk (a file size limit, a nearly full disk): write the rest, or fail.
          for (let offset = 0; offset < chunk.value.byteLength; ) {
            const { bytesWritten } = await handle.write(chunk.value, offset);
            if (bytesWritten <= 0) throw Object.assign(new Error("no bytes written"), { code: "ENOSPC" });
            offset += bytesWritten;
          }
        } catch (error) {
          throw modelsFsError(error, "write", part);
        }
        report(received);
      }
    } catch (error) {
      await reader.cancel().catch(() => {});
      if (error instanceof SemsearchError) {
        if (error.code === "MODEL_DOWNLOAD_CORRUPT") rmSync(part, { force: true });
        throw error;
      }
      throw new EnvironmentError("MODEL_DOWNLOAD_FAILED", `The download of ${model.id}/${file.path} was interrupted after ${received} of ${file.size} bytes (${error instanceof Error ? error.message : String(error)})`, {
        hint: "Run the command again to resume where it stopped.",
        cause: error,
      });
    } finally {
      await handle.close();
    }
    if (received < file.size) {
      throw new EnvironmentError("MODEL_DOWNLOAD_FAILED", `The download of ${model.id}/${file.path} ended early: ${received} of ${file.size} bytes`, { hint: "Run the command again to resume where it stopped." });
    }
  }
  const written = statSync(part, { throwIfNoEntry: false })?.size;
  const mismatch = written !== file.size ? `${written ?? 0} bytes on disk, ${file.size} listed` : hashMismatch(file, hashes);
  if (mismatch) {
    rmSync(part, { force: true });
    throw corrupt(model.id, file, mismatch);
  }
  try {
    renameSync(part, target);
  } catch (error) {
    throw modelsFsError(error, "write", target);
  }
}

/**
 * Downloads a model's files at one revision into the cache (what is whole already is kept), then
 * records them in the revision's manifest. One download of a model at a time (a lock per revision).
 */
export async function downloadModel(model: HubModel, files: HubFile[], options: DownloadOptions = {}): Promise<string> {
  const dir = revisionDir(model.id, model.revision);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw modelsFsError(error, "create", dir);
  }
  return withLock(path.join(dir, ".download.lock"), async () => {
    const existing = readManifest(dir);
    const whole = new Set<string>();
    // Files in place are checked against the hub's hashes (not the manifest): a damaged cache is repaired.
    for (const file of files) if (await alreadyWhole(file, path.join(dir, file.path))) whole.add(file.path);
    const total = files.reduce((sum, file) => sum + file.size, 0);
    let before = files.filter((file) => whole.has(file.path)).reduce((sum, file) => sum + file.size, 0);
    options.onProgress?.({ file: "", done: before, total });
    for (const file of files) {
      if (whole.has(file.path)) continue;
      await downloadFile(model, file, dir, options, (bytes) => options.onProgress?.({ file: file.path, done: before + bytes, total }));
      before += file.size;
    }
    const manifest: Manifest = {
      id: model.id,
      revision: model.revision,
      pulled_at: new Date().toISOString(),
      files: { ...existing?.files },
    };
    for (const file of files) manifest.files[file.path] = { size: file.size, ...(file.sha256 ? { sha256: file.sha256 } : {}), ...(file.blob ? { blob: file.blob } : {}) };
    writeManifest(dir, manifest);
    return dir;
  }, 30 * 60_000);
}

