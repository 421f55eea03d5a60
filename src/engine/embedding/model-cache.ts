/**
 * Where downloaded models live, and how a model folder is checked before it is used.
 *
 * The cache directory is `SEMSEARCH_MODELS`, else the platform's user cache folder
 * (`$XDG_CACHE_HOME/semsearch/models` or `~/.cache/semsearch/models` on Linux,
 * `~/Library/Caches/semsearch/models` on macOS, `%LOCALAPPDATA%\semsearch\models` on Windows).
 * A model downloaded from the hub is kept per revision, in transformers.js layout:
 * `hub/<owner>/<name>/<revision>/{config.json, tokenizer.json, onnx/model_quantized.onnx, …}`, with
 * `.semsearch.json` (what was downloaded, with sizes and hashes) written once every file is whole.
 */
import { createHash } from "node:crypto";
import { createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, type Stats } from "node:fs";
import path from "node:path";
import * as v from "valibot";
import { ConflictError, environmentError, EnvironmentError, InternalError, SemsearchError, systemErrorCode } from "../errors.js";
import { describeHolder, lockHolder, tryLock } from "../lock.js";
import { readState, writeState } from "../state-files.js";
import { hashedFiles, TOKENIZER_FILES, type ModelSpec } from "./model-spec.js";
import { modelsDir } from "./models-dir.js";

export { modelsDir };

const MODELS_HINT = "Check the permissions of the models folder, or set SEMSEARCH_MODELS to a folder you can write.";

/**
 * A file-system failure in the models folder (or a model folder), with hints about that folder
 * rather than the project: EnvironmentError for the environment's faults and for a models folder
 * that is not a usable directory, InternalError otherwise.
 */
export function modelsFsError(error: unknown, action: string, file: string): SemsearchError {
  if (error instanceof SemsearchError) return error;
  const code = systemErrorCode(error);
  if (code === "ENOENT" || code === "ENOTDIR" || code === "EEXIST") {
    return new EnvironmentError("MODELS_DIR_UNUSABLE", `Cannot ${action} ${file} (${code}): the models folder ${modelsDir()} is not a usable directory`, {
      hint: "SEMSEARCH_MODELS must name a directory, or a path where one can be created.",
      cause: error,
    });
  }
  const known = environmentError(error, `Cannot ${action} ${file}`);
  if (known) return new EnvironmentError(known.code, known.message, { hint: code === "ENOSPC" || code === "EDQUOT" ? known.hint : MODELS_HINT, cause: error });
  return new InternalError("INTERNAL", `Cannot ${action} ${file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
}

/**
 * A model file's stat: for a regular file (symbolic links followed), null when absent; a
 * directory, FIFO or device is MODEL_UNREADABLE (reading one could hang), a permission problem an
 * EnvironmentError.
 */
export function modelFileStat(file: string): Stats | null {
  let stat: Stats;
  try {
    stat = statSync(file);
  } catch (error) {
    const code = systemErrorCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw modelsFsError(error, "read", file);
  }
  if (!stat.isFile()) throw new EnvironmentError("MODEL_UNREADABLE", `The model file ${file} is not a regular file`, { hint: "A model folder holds regular files (or links to them)." });
  return stat;
}

/** Whether a model file is there (see modelFileStat). */
export function isModelFile(file: string): boolean {
  return modelFileStat(file) !== null;
}

/** A Hugging Face model id: `owner/name`, each part letters, digits, `-`, `_`, `.`, not starting with `.` or `-`. */
export const HUB_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}\/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$/;

export function isHubId(value: string): boolean {
  return HUB_ID.test(value) && !value.includes("..");
}

/** The folder of one downloaded revision of a hub model. */
export function revisionDir(id: string, revision: string): string {
  return path.join(modelsDir(), "hub", ...id.split("/"), revision);
}

const MANIFEST = ".semsearch.json";

const FileEntry = v.object({ size: v.pipe(v.number(), v.safeInteger(), v.minValue(0)), sha256: v.optional(v.string()), blob: v.optional(v.string()) });
const ManifestSchema = v.object({
  id: v.string(),
  revision: v.string(),
  pulled_at: v.string(),
  files: v.record(v.string(), FileEntry),
});
export type Manifest = v.InferOutput<typeof ManifestSchema>;

export function readManifest(dir: string): Manifest | null {
  const read = readState(path.join(dir, MANIFEST), ManifestSchema);
  return read.ok ? read.value : null;
}

export function writeManifest(dir: string, manifest: Manifest): void {
  try {
    writeState(path.join(dir, MANIFEST), manifest);
  } catch (error) {
    throw modelsFsError((error as { cause?: unknown }).cause ?? error, "write", path.join(dir, MANIFEST));
  }
}

/** A downloaded revision of a hub model. */
export interface CachedModel {
  id: string;
  revision: string;
  dir: string;
  manifest: Manifest;
  bytes: number;
}

function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw modelsFsError(error, "read", dir);
  }
}

/** Every whole downloaded revision in the cache (newest pull first per model). */
export function cachedModels(): CachedModel[] {
  const root = path.join(modelsDir(), "hub");
  const out: CachedModel[] = [];
  for (const owner of subdirs(root)) {
    for (const name of subdirs(path.join(root, owner))) {
      for (const revision of subdirs(path.join(root, owner, name))) {
        const dir = path.join(root, owner, name, revision);
        const manifest = readManifest(dir);
        if (!manifest) continue;
        const bytes = Object.values(manifest.files).reduce((sum, file) => sum + file.size, 0);
        out.push({ id: manifest.id, revision, dir, manifest, bytes });
      }
    }
  }
  return out.sort((a, b) => a.id.localeCompare(b.id) || b.manifest.pulled_at.localeCompare(a.manifest.pulled_at));
}

/** Removes every downloaded revision of a model; returns the bytes freed. ConflictError MODEL_BUSY while one is being downloaded. */
export function removeCachedModel(id: string): number {
  let freed = 0;
  for (const model of cachedModels().filter((candidate) => candidate.id.toLowerCase() === id.toLowerCase())) {
    const lock = path.join(model.dir, ".download.lock");
    // Holding the download lock while removing: a pull of this revision cannot be writing into it.
    if (!tryLock(lock)) {
      throw new ConflictError("MODEL_BUSY", `The model ${model.id} is being downloaded by ${describeHolder(lockHolder(lock))}`, { hint: "Wait for the download to finish, then remove it." });
    }
    try {
      rmSync(model.dir, { recursive: true, force: true });
    } catch (error) {
      throw modelsFsError(error, "remove", model.dir);
    }
    freed += model.bytes;
  }
  return freed;
}

/** SHA-256 of a file, streamed. */
export function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    createReadStream(file)
      .on("data", (chunk) => hash.update(chunk))
      .on("error", reject)
      .on("end", () => resolve(hash.digest("hex")));
  });
}

const StampSchema = v.object({ file: v.string(), size: v.number(), mtimeMs: v.number(), ino: v.number(), sha256: v.string() });

/**
 * The SHA-256 of a weights file, hashed again only when its size, modification time or inode
 * changed since it was last hashed (the result is kept under `<models>/.verified/`), so a search
 * does not read hundreds of megabytes to check its model.
 */
export async function weightsHash(file: string): Promise<string> {
  const stat = modelFileStat(file);
  if (!stat) throw new EnvironmentError("MODEL_MISSING", `The model file ${file} does not exist`);
  const stampDir = path.join(modelsDir(), ".verified");
  const stamp = path.join(stampDir, `${createHash("sha1").update(path.resolve(file)).digest("hex")}.json`);
  const known = readState(stamp, StampSchema);
  if (known.ok && known.value.file === path.resolve(file) && known.value.size === stat.size && known.value.mtimeMs === stat.mtimeMs && known.value.ino === stat.ino) {
    return known.value.sha256;
  }
  const sha256 = await sha256File(file);
  try {
    mkdirSync(stampDir, { recursive: true });
    writeState(stamp, { file: path.resolve(file), size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino, sha256 });
  } catch {
    // a read-only cache: the hash is computed again next time
  }
  return sha256;
}

/** SHA-256 over a model folder's tokenizer and config files (each as its name, length and bytes; a missing one as its name only). */
export function tokenizerHash(dir: string, files: readonly string[] = TOKENIZER_FILES): string {
  const hash = createHash("sha256");
  for (const name of files) {
    hash.update(`${name}\0`);
    if (!isModelFile(path.join(dir, name))) continue;
    let content: Buffer;
    try {
      content = readFileSync(path.join(dir, name));
    } catch (error) {
      throw modelsFsError(error, "read", path.join(dir, name));
    }
    hash.update(`${content.length}\0`).update(content);
  }
  return hash.digest("hex");
}

/** Codes of errors that mean a model cannot be used at all (not that one text failed). */
export const MODEL_UNAVAILABLE = new Set(["MODEL_MISSING", "MODEL_CHANGED", "MODEL_UNREADABLE", "MODEL_UNSUPPORTED"]);

/**
 * Another downloaded revision of a hub model with exactly the files an index was built with (a
 * newer commit that changed only, say, the README), for when the recorded revision is gone.
 */
async function sameFilesElsewhere(spec: ModelSpec): Promise<string | null> {
  const weights = specWeights(spec);
  if (weights.length === 0) return null;
  for (const model of cachedModels()) {
    if (model.id.toLowerCase() !== spec.id.toLowerCase() || weights.some((entry) => model.manifest.files[entry.file]?.sha256 !== entry.sha256)) continue;
    if (spec.tokenizer_sha256 && tokenizerHash(model.dir, hashedFiles(spec.kind)) !== spec.tokenizer_sha256) continue;
    return model.dir;
  }
  return null;
}

/** Every weights file an index recorded: one for a text model, the text and vision towers of a CLIP model. */
export function specWeights(spec: ModelSpec): NonNullable<ModelSpec["weights"]>[] {
  return [spec.weights, spec.vision_weights].filter((entry) => entry !== undefined);
}

/** The folder a model's files are read from (none for the bundled model). */
function modelFolder(spec: ModelSpec): string | null {
  if (spec.source === "folder") return spec.id;
  if (spec.source === "hub") return revisionDir(spec.id, spec.revision ?? "main");
  return null;
}

/**
 * Checks that the files an index was built with are still there and unchanged; EnvironmentError
 * MODEL_MISSING or MODEL_CHANGED otherwise (a search must never embed with different weights).
 */
export async function verifyModelFiles(spec: ModelSpec): Promise<string | null> {
  let dir = modelFolder(spec);
  const weights = specWeights(spec);
  if (dir === null || weights.length === 0) return dir;
  if (spec.source === "hub" && !existsSync(dir)) dir = (await sameFilesElsewhere(spec)) ?? dir;
  const fix =
    spec.source === "hub"
      ? `Download it again with \`semsearch models pull ${spec.id} --revision ${spec.revision}${spec.dtype ? ` --dtype ${spec.dtype}` : ""}\`, or copy its folder from a machine that has it.`
      : `Put the model folder back at ${dir}, or create a new index with the model you have.`;
  const hashes: string[] = [];
  for (const entry of weights) {
    const file = path.join(dir, entry.file);
    if (!isModelFile(file)) {
      throw new EnvironmentError("MODEL_MISSING", `The model ${spec.id} of this index is missing: ${file} does not exist`, { hint: fix });
    }
    try {
      hashes.push(await weightsHash(file));
    } catch (error) {
      throw modelsFsError(error, "read", file);
    }
  }
  if (spec.tokenizer_sha256 && tokenizerHash(dir, hashedFiles(spec.kind)) !== spec.tokenizer_sha256) {
    const what = spec.kind === "clip" ? "tokenizer, config or image preprocessing (preprocessor_config.json)" : "tokenizer or config";
    throw new EnvironmentError("MODEL_CHANGED", `The model ${spec.id} of this index has changed: its ${what} in ${dir} is not the one the index was built with`, {
      hint: `Vectors made with other settings would not match the index. ${fix}`,
    });
  }
  weights.forEach((entry, i) => {
    const sha256 = hashes[i] as string;
    if (sha256 !== entry.sha256) {
      throw new EnvironmentError("MODEL_CHANGED", `The model ${spec.id} of this index has changed: ${path.join(dir, entry.file)} is not the file the index was built with (SHA-256 ${sha256.slice(0, 12)}…, expected ${entry.sha256.slice(0, 12)}…)`, {
        hint: `Vectors from other weights would not match the index. ${fix}`,
      });
    }
  });
  return dir;
}
