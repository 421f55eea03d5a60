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
import { createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import * as v from "valibot";
import { EnvironmentError, fsError } from "../errors.js";
import { readState, writeState } from "../state-files.js";
import { TOKENIZER_FILES, type ModelSpec } from "./model-spec.js";

/** A Hugging Face model id: `owner/name`, each part letters, digits, `-`, `_`, `.`, not starting with `.` or `-`. */
export const HUB_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}\/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$/;

export function isHubId(value: string): boolean {
  return HUB_ID.test(value) && !value.includes("..");
}

/** The models cache directory. */
export function modelsDir(): string {
  const configured = process.env.SEMSEARCH_MODELS;
  if (configured) return path.resolve(configured);
  const home = homedir();
  if (process.platform === "darwin") return path.join(home, "Library", "Caches", "semsearch", "models");
  if (process.platform === "win32") return path.join(process.env.LOCALAPPDATA ?? path.join(home, "AppData", "Local"), "semsearch", "models");
  return path.join(process.env.XDG_CACHE_HOME || path.join(home, ".cache"), "semsearch", "models");
}

/** The folder of one downloaded revision of a hub model. */
export function revisionDir(id: string, revision: string): string {
  return path.join(modelsDir(), "hub", ...id.split("/"), revision);
}

export const MANIFEST = ".semsearch.json";

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
  writeState(path.join(dir, MANIFEST), manifest);
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
    throw fsError(error, "read", dir);
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

/** The newest whole download of a hub model holding the given weights file, if any. */
export function cachedModel(id: string, weightsFile?: string): CachedModel | undefined {
  const lower = id.toLowerCase();
  return cachedModels().find((model) => model.id.toLowerCase() === lower && (weightsFile === undefined || Object.hasOwn(model.manifest.files, weightsFile)));
}

/** Removes every downloaded revision of a model; returns the bytes freed. */
export function removeCachedModel(id: string): number {
  let freed = 0;
  for (const model of cachedModels().filter((candidate) => candidate.id.toLowerCase() === id.toLowerCase())) {
    try {
      rmSync(model.dir, { recursive: true, force: true });
    } catch (error) {
      throw fsError(error, "remove", model.dir);
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
  const stat = statSync(file);
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
export function tokenizerHash(dir: string): string {
  const hash = createHash("sha256");
  for (const name of TOKENIZER_FILES) {
    hash.update(`${name}\0`);
    let content: Buffer;
    try {
      content = readFileSync(path.join(dir, name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw fsError(error, "read", path.join(dir, name));
    }
    hash.update(`${content.length}\0`).update(content);
  }
  return hash.digest("hex");
}

/** Codes of errors that mean a model cannot be used at all (not that one text failed). */
export const MODEL_UNAVAILABLE = new Set(["MODEL_MISSING", "MODEL_CHANGED", "MODEL_UNREADABLE", "MODEL_UNSUPPORTED"]);

/** The folder a model's files are read from (none for the bundled model). */
export function modelFolder(spec: ModelSpec): string | null {
  if (spec.source === "folder") return spec.id;
  if (spec.source === "hub") return revisionDir(spec.id, spec.revision ?? "main");
  return null;
}

/**
 * Checks that the files an index was built with are still there and unchanged; EnvironmentError
 * MODEL_MISSING or MODEL_CHANGED otherwise (a search must never embed with different weights).
 */
export async function verifyModelFiles(spec: ModelSpec): Promise<string | null> {
  const dir = modelFolder(spec);
  if (dir === null || !spec.weights) return dir;
  const file = path.join(dir, spec.weights.file);
  const fix =
    spec.source === "hub"
      ? `Download it again with \`semsearch models pull ${spec.id}\` (revision ${spec.revision}), or copy that folder from a machine that has it.`
      : `Put the model folder back at ${dir}, or create a new index with the model you have.`;
  if (!existsSync(file)) {
    throw new EnvironmentError("MODEL_MISSING", `The model ${spec.id} of this index is missing: ${file} does not exist`, { hint: fix });
  }
  let sha256: string;
  try {
    sha256 = await weightsHash(file);
  } catch (error) {
    throw fsError(error, "read", file);
  }
  if (spec.tokenizer_sha256 && tokenizerHash(dir) !== spec.tokenizer_sha256) {
    throw new EnvironmentError("MODEL_CHANGED", `The model ${spec.id} of this index has changed: its tokenizer or config in ${dir} is not the one the index was built with`, {
      hint: `Vectors from another tokenizer would not match the index. ${fix}`,
    });
  }
  if (sha256 !== spec.weights.sha256) {
    throw new EnvironmentError("MODEL_CHANGED", `The model ${spec.id} of this index has changed: ${file} is not the file the index was built with (SHA-256 ${sha256.slice(0, 12)}…, expected ${spec.weights.sha256.slice(0, 12)}…)`, {
      hint: `Vectors from other weights would not match the index. ${fix}`,
    });
  }
  return dir;
}
