/**
 * Embedding models as users name them: `use` (bundled), a Hugging Face id, or a model folder.
 * Resolving a name gives the ModelSpec an index records, downloading the model first when asked
 * to; listing, pulling ahead and removing downloaded models.
 */
import { existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { ConflictError, EnvironmentError, NotFoundError, SemsearchError, ValidationError, type Warning } from "./errors.js";
import { knownModel, KNOWN_MODELS, type KnownModel } from "./embedding/known-models.js";
import { cachedModels, isHubId, isModelFile, modelsDir, modelsFsError, readManifest, removeCachedModel, tokenizerHash, weightsHash, type CachedModel } from "./embedding/model-cache.js";
import { hashedFiles, MODEL_DTYPES, weightsFiles, type ModelDtype, type ModelSpec, type Pooling } from "./embedding/model-spec.js";
import { chooseDtype, downloadModel, fetchModelInfo, filesFor, modelKind, type DownloadProgress } from "./embedding/hub.js";
import { BUNDLED_ALIASES, BUNDLED_DESCRIPTION, BUNDLED_SPEC, DEFAULT_IMAGE_MODEL, loadModel } from "./embedding/registry.js";
import { embedsImages } from "./embedding/provider.js";
import { parsePreprocessorConfig } from "./images/preprocess-config.js";
import { readFolderFacts } from "./embedding/folder-facts.js";
import { readModelJson } from "./embedding/model-json.js";
import type { IndexRecord } from "./types.js";

export interface ResolveOptions {
  dtype?: ModelDtype;
  /** A hub revision (commit, branch or tag) instead of the newest download or `main`. */
  revision?: string;
  /** Download a hub model that is not in the cache (index create, models pull); never in the worker. */
  download?: boolean;
  onProgress?: (progress: DownloadProgress) => void;
  warn?: (warning: Warning) => void;
  /** false: a model folder (a path) is refused, MODEL_FOLDER_NOT_ALLOWED (indexes created over HTTP). Default true. */
  folders?: boolean;
}

/** Whether a `--model` value names a folder rather than a hub id. */
function looksLikePath(name: string): boolean {
  if (/^(\.{1,2}([\\/]|$)|[\\/]|~[\\/]|[A-Za-z]:[\\/])/.test(name)) return true;
  // `owner/name` is a hub id unless a model folder of that name is right here.
  return isHubId(name) ? existsSync(path.join(name, "config.json")) : existsSync(name);
}

function expandHome(name: string): string {
  return name.startsWith("~/") || name.startsWith("~\\") ? path.join(homedir(), name.slice(2)) : name;
}

/** Settings a folder states itself, in sentence-transformers' files (`1_Pooling/config.json`, `config_sentence_transformers.json`). */
function statedSettings(dir: string): Partial<Pick<KnownModel, "pooling" | "query_prefix" | "document_prefix">> {
  const out: Partial<Pick<KnownModel, "pooling" | "query_prefix" | "document_prefix">> = {};
  const pooling = readModelJson(path.join(dir, "1_Pooling", "config.json"));
  if (pooling?.pooling_mode_cls_token === true) out.pooling = "cls";
  else if (pooling?.pooling_mode_mean_tokens === true) out.pooling = "mean";
  const st = readModelJson(path.join(dir, "config_sentence_transformers.json"));
  const prompts = st?.prompts as Record<string, unknown> | undefined;
  if (typeof prompts?.query === "string") out.query_prefix = prompts.query;
  if (typeof prompts?.document === "string") out.document_prefix = prompts.document;
  else if (typeof prompts?.passage === "string") out.document_prefix = prompts.passage;
  return out;
}

/**
 * The spec of a model in a folder: weights chosen by dtype, hashed; settings from the known table
 * (by the id a semsearch download recorded), else from the folder's own sentence-transformers files,
 * else mean pooling without prefixes (with a warning).
 */
async function folderSpec(dir: string, source: "hub" | "folder", id: string, options: ResolveOptions, revision?: string): Promise<ModelSpec> {
  const kind = modelKind((file) => isModelFile(path.join(dir, file)));
  const needed = hashedFiles(kind);
  const missing = needed.filter((file) => !isModelFile(path.join(dir, file)));
  const config = missing.includes("config.json") ? undefined : readModelJson(path.join(dir, "config.json"));
  if (missing.length || !config) {
    throw new ValidationError("MODEL_UNSUPPORTED", `${dir} is not a model folder: it has no ${missing.length ? missing.join(", ") : "config.json holding a JSON object"} (a model folder in transformers.js layout has ${kind === "clip" ? "config.json, tokenizer.json, tokenizer_config.json, preprocessor_config.json, onnx/text_model.onnx and onnx/vision_model.onnx" : "config.json, tokenizer.json, tokenizer_config.json and onnx/model.onnx"})`, {
      issues: [{ path: "configuration.model", message: "not a model folder" }],
    });
  }
  const dtype = chooseDtype((file) => isModelFile(path.join(dir, file)), options.dtype, kind);
  if (dtype === null) {
    const wanted = options.dtype ? weightsFiles(kind, options.dtype).join(" and ") : kind === "clip" ? "both towers' ONNX weights (onnx/text_model.onnx and onnx/vision_model.onnx, or their _quantized files)" : "onnx/model.onnx or onnx/model_quantized.onnx";
    throw new ValidationError("MODEL_UNSUPPORTED", `${dir} has no ${wanted}`, {
      issues: [{ path: "configuration.model", message: "no ONNX weights" }],
    });
  }
  const [weights, visionWeights] = await Promise.all(weightsFiles(kind, dtype).map((file) => hashedWeights(dir, file)));
  const tokenizer_sha256 = tokenizerHash(dir, needed);
  if (kind === "clip") return clipSpec(id, source, dir, config, { ...(revision ? { revision } : {}), dtype, weights, vision_weights: visionWeights, tokenizer_sha256 });
  const facts = readFolderFacts(config, readModelJson(path.join(dir, "tokenizer_config.json")) ?? {}, dir);
  const recordedId = readManifest(dir)?.id;
  const known = knownModel(recordedId ?? id);
  const stated = statedSettings(dir);
  if (!known && stated.pooling === undefined) {
    options.warn?.({
      code: "MODEL_SETTINGS_GUESSED",
      message: `semsearch does not know the model ${id}: it uses mean pooling, no query or document prefixes, and a window of ${facts.window} tokens (from its config). If its model card says otherwise, results will be weaker.`,
    });
  }
  const pooling: Pooling = known?.pooling ?? stated.pooling ?? "mean";
  return {
    id,
    source,
    ...(revision ? { revision } : {}),
    dtype,
    weights,
    tokenizer_sha256,
    pooling,
    normalize: known?.normalize ?? true,
    query_prefix: known?.query_prefix ?? stated.query_prefix ?? "",
    document_prefix: known?.document_prefix ?? stated.document_prefix ?? "",
    window: Math.min(known?.window ?? facts.window, facts.window),
    dimension: facts.dimension,
  };
}

/** A weights file of a model folder with its size and SHA-256. */
async function hashedWeights(dir: string, file: string): Promise<NonNullable<ModelSpec["weights"]>> {
  try {
    const { size } = statSync(path.join(dir, file));
    return { file, size, sha256: await weightsHash(path.join(dir, file)) };
  } catch (error) {
    throw modelsFsError(error, "read", path.join(dir, file));
  }
}

/** Image-text model types semsearch runs: each tower gives one vector per text or image. */
export const CLIP_MODEL_TYPES = ["clip", "siglip"] as const;

/**
 * The spec of a CLIP-family model: vectors in the shared space (`projection_dim`), texts in windows
 * of the text tower's positions (77 for CLIP), no prefixes, unit vectors.
 */
function clipSpec(id: string, source: "hub" | "folder", dir: string, config: Record<string, unknown>, files: Pick<ModelSpec, "revision" | "dtype" | "weights" | "vision_weights" | "tokenizer_sha256">): ModelSpec {
  const type = config.model_type;
  if (!(CLIP_MODEL_TYPES as readonly unknown[]).includes(type)) {
    // The value is not quoted: errors never show a model file's content.
    throw new ValidationError("MODEL_UNSUPPORTED", `The model in ${dir} has text and vision towers, but the model_type in its config.json is not one semsearch runs (${CLIP_MODEL_TYPES.join(" or ")})`, {
      issues: [{ path: "configuration.model", message: "unsupported model_type in config.json" }],
    });
  }
  const text = (config.text_config ?? {}) as Record<string, unknown>;
  const positive = (value: unknown) => (typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : undefined);
  // The image preprocessing must be readable and give the size the vision tower was built for.
  const input = parsePreprocessorConfig(readModelJson(path.join(dir, "preprocessor_config.json")) ?? null);
  const imageSize = positive((config.vision_config as Record<string, unknown> | undefined)?.image_size);
  if (imageSize !== undefined && (input.width !== imageSize || input.height !== imageSize)) {
    throw new ValidationError("MODEL_UNSUPPORTED", `The model in ${dir} cannot be used: its preprocessor_config.json makes ${input.width} × ${input.height} images, but its vision tower takes ${imageSize} × ${imageSize} (config.json vision_config.image_size)`, {
      issues: [{ path: "configuration.model", message: "preprocessor_config.json does not fit the vision tower" }],
    });
  }
  const positions = positive(text.max_position_embeddings) ?? 77;
  return {
    id,
    source,
    kind: "clip",
    ...files,
    normalize: true,
    query_prefix: "",
    document_prefix: "",
    window: positions,
    // The probe at index creation gives the real one.
    dimension: positive(config.projection_dim) ?? positive(text.projection_size) ?? positive(text.hidden_size) ?? 1,
  };
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j] as number;
      row[j] = Math.min(above + 1, (row[j - 1] as number) + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length] as number;
}

/** The known names closest to a mistyped one. */
export function suggestModels(name: string): string[] {
  const lower = name.toLowerCase();
  const names = [...BUNDLED_ALIASES.slice(0, 1), ...KNOWN_MODELS.map((model) => model.id)];
  return names
    .map((candidate) => {
      const c = candidate.toLowerCase();
      return { candidate, score: Math.min(distance(lower, c), distance(lower, c.split("/").pop() as string)) };
    })
    .filter(({ candidate, score }) => candidate !== name && score <= Math.max(2, Math.floor(name.length / 4)))
    .sort((a, b) => a.score - b.score)
    .slice(0, 3)
    .map(({ candidate }) => candidate);
}

/** Whether every file a download recorded is in place with its size (a damaged download is fetched again). */
function complete(model: CachedModel): boolean {
  return Object.entries(model.manifest.files).every(([file, entry]) => {
    try {
      const stat = statSync(path.join(model.dir, file));
      return stat.isFile() && stat.size === entry.size;
    } catch {
      return false;
    }
  });
}

/** A hub model in the cache, or downloaded now; MODEL_NOT_DOWNLOADED when not allowed to download. */
async function hubModelDir(id: string, options: ResolveOptions): Promise<{ dir: string; revision: string; id: string }> {
  const cached = cachedModels().find((model) => {
    const has = (file: string) => Object.hasOwn(model.manifest.files, file);
    return (
      model.id.toLowerCase() === id.toLowerCase() &&
      (options.revision === undefined || model.revision.startsWith(options.revision)) &&
      chooseDtype(has, options.dtype, modelKind(has)) !== null &&
      complete(model)
    );
  });
  if (cached) return { dir: cached.dir, revision: cached.revision, id: cached.manifest.id };
  if (!options.download) {
    throw new NotFoundError("MODEL_NOT_DOWNLOADED", `The model ${id}${options.dtype ? ` (${options.dtype})` : ""} is not downloaded (models folder: ${modelsDir()})`, {
      hint: `Run \`semsearch models pull ${id}\`, or copy the models folder from a machine that has it.`,
    });
  }
  const info = await fetchModelInfo(id, options.revision);
  const listed = (file: string) => info.files.some((candidate) => candidate.path === file);
  const kind = modelKind(listed);
  const dtype = chooseDtype(listed, options.dtype, kind);
  if (dtype === null) {
    throw new ValidationError("MODEL_UNSUPPORTED", `The model ${id} has no ${options.dtype ? weightsFiles(kind, options.dtype).join(" and ") : "ONNX weights (onnx/model.onnx)"} on the hub`, {
      hint: "semsearch runs ONNX feature-extraction models in transformers.js layout; look for a Xenova/… or onnx-community/… conversion.",
      issues: [{ path: "configuration.model", message: "no ONNX weights" }],
    });
  }
  const files = filesFor(info, dtype, kind);
  const extra = info.files.filter((file) => file.path === "1_Pooling/config.json" || file.path === "config_sentence_transformers.json");
  const dir = await downloadModel(info, [...files, ...extra], { onProgress: options.onProgress });
  return { dir, revision: info.revision, id };
}

/**
 * The spec of the model `name` names: `use`/`default` (bundled), a model folder (a path), or a hub
 * id (from the cache, or downloaded when `download` is set). ValidationError UNKNOWN_MODEL for
 * anything else, with the nearest known names.
 */
export async function resolveModelSpec(name: string, options: ResolveOptions = {}): Promise<ModelSpec> {
  if ((BUNDLED_ALIASES as readonly string[]).includes(name)) {
    if (options.dtype) throw new ValidationError("INVALID_MODEL_DTYPE", "The bundled model has no dtype choice", { issues: [{ path: "configuration.model_dtype", message: "only for Hugging Face models" }] });
    return BUNDLED_SPEC;
  }
  if (looksLikePath(name)) {
    if (options.folders === false) {
      throw new ValidationError("MODEL_FOLDER_NOT_ALLOWED", "A model folder cannot be named over HTTP: name a Hugging Face model id, or create the index with the CLI", {
        issues: [{ path: "configuration.model", message: "a folder path" }],
      });
    }
    const dir = path.resolve(expandHome(name));
    if (!existsSync(dir)) {
      throw new ValidationError("UNKNOWN_MODEL", `The model folder ${dir} does not exist`, { issues: [{ path: "configuration.model", message: "no such folder" }] });
    }
    if (!statSync(dir).isDirectory()) {
      throw new ValidationError("UNKNOWN_MODEL", `${dir} is not a folder: --model takes a model folder, not a file`, { issues: [{ path: "configuration.model", message: "not a folder" }] });
    }
    return folderSpec(dir, "folder", dir, options);
  }
  if (!isHubId(name)) {
    const near = suggestModels(name);
    throw new ValidationError("UNKNOWN_MODEL", `Unknown embedding model "${name}": use \`use\` (bundled), a Hugging Face id (owner/name), or a model folder path`, {
      hint: near.length ? `Did you mean ${near.join(" or ")}?` : "`semsearch models list` shows the known models.",
      issues: [{ path: "configuration.model", message: `unknown model "${name}"` }],
    });
  }
  const { dir, revision, id } = await hubModelDir(name, options);
  return folderSpec(dir, "hub", knownModel(id)?.id ?? id, options, revision);
}

/**
 * Loads a model and embeds a probe text: a model that cannot run here is refused when an index is
 * created (nothing is created), not found later by the background worker. The dimension is the one
 * the model really gives.
 */
export async function checkModelRuns(spec: ModelSpec): Promise<ModelSpec> {
  if (spec.source === "bundled") return spec;
  let vectors: Float32Array[] = [];
  try {
    const model = await loadModel({ ...spec, dimension: 0 });
    // A text that fills a whole window: a config that promises more tokens than the model takes fails here.
    vectors = await model.embedTexts(["a ".repeat(spec.window ?? 512)]);
    if (embedsImages(model)) {
      // And a mid-grey image through the vision tower: both towers must give vectors of one size.
      const input = await model.imageInput();
      vectors.push(...(await model.embedImages([new Float32Array(3 * input.height * input.width)])));
    }
  } catch (error) {
    if (error instanceof SemsearchError && error.code !== "MODEL_CHANGED") throw error;
    throw new EnvironmentError("MODEL_UNREADABLE", `The model ${spec.id} does not run: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`, {
      hint: "Its files may be damaged or not an embedding model: download it again, or use another model.",
      cause: error,
    });
  }
  const [vector] = vectors;
  if (!vector || vector.length === 0 || vectors.some((candidate) => candidate.length !== vector.length || candidate.some((x) => !Number.isFinite(x)))) {
    throw new EnvironmentError("MODEL_UNREADABLE", `The model ${spec.id} gives no usable vectors${vectors.length > 1 && vectors[1]?.length !== vector?.length ? ` (text ${vector?.length}-d, images ${vectors[1]?.length}-d)` : ""}`, { hint: "Use a feature-extraction (embedding) model." });
  }
  return { ...spec, dimension: vector.length };
}

export interface ModelListEntry {
  id: string;
  /** `bundled`, `downloaded`, or `known` (not downloaded) */
  status: "bundled" | "downloaded" | "known";
  description: string;
  dimension?: number;
  pooling?: Pooling;
  /** Downloaded revisions with their dtypes, size and folder. */
  downloads: { revision: string; dtypes: ModelDtype[]; bytes: number; path: string }[];
  /** Indexes of this project that use the model. */
  used_by: string[];
  /** Published SciFact nDCG@10 where known. */
  scifact?: number;
}

function dtypesOf(model: CachedModel): ModelDtype[] {
  const has = (file: string) => Object.hasOwn(model.manifest.files, file);
  const kind = modelKind(has);
  return MODEL_DTYPES.filter((dtype) => weightsFiles(kind, dtype).every(has));
}

/** Known and downloaded models, with what uses them in the given indexes. */
export function listModelEntries(indexes: readonly IndexRecord[]): ModelListEntry[] {
  const usedBy = (id: string) => indexes.filter((index) => (index.embedding?.id ?? index.model).toLowerCase() === id.toLowerCase()).map((index) => index.name ?? index.id);
  const cached = cachedModels();
  const entries: ModelListEntry[] = [
    { id: BUNDLED_SPEC.id, status: "bundled", description: BUNDLED_DESCRIPTION, dimension: BUNDLED_SPEC.dimension, downloads: [], used_by: usedBy(BUNDLED_SPEC.id) },
  ];
  const ids = new Map<string, string>();
  for (const known of KNOWN_MODELS) ids.set(known.id.toLowerCase(), known.id);
  for (const model of cached) if (!ids.has(model.id.toLowerCase())) ids.set(model.id.toLowerCase(), model.id);
  for (const [lower, id] of ids) {
    const known = knownModel(id);
    const downloads = cached.filter((model) => model.id.toLowerCase() === lower).map((model) => ({ revision: model.revision, dtypes: dtypesOf(model), bytes: model.bytes, path: model.dir }));
    entries.push({
      id,
      status: downloads.length ? "downloaded" : "known",
      description: !known
        ? "not in the known table (settings read from its config)"
        : known.kind === "clip"
          ? `image-text (CLIP), ${known.dimension}-d, for image indexes${known.id === DEFAULT_IMAGE_MODEL ? " (their default)" : ""}`
          : `${known.languages}, ${known.dimension}-d, ${known.pooling} pooling${known.query_prefix ? ", query prefix" : ""}`,
      ...(known ? { dimension: known.dimension, ...(known.kind ? {} : { pooling: known.pooling }) } : {}),
      downloads,
      used_by: usedBy(id),
      ...(known?.scifact ? { scifact: known.scifact } : {}),
    });
  }
  // Folder models used by indexes of this project.
  for (const index of indexes) {
    if (index.embedding?.source === "folder" && !entries.some((entry) => entry.id === index.embedding?.id)) {
      entries.push({ id: index.embedding.id, status: "downloaded", description: "a local model folder", dimension: index.embedding.dimension, pooling: index.embedding.pooling, downloads: [], used_by: usedBy(index.embedding.id) });
    }
  }
  return entries;
}

export interface PullResult {
  id: string;
  revision: string;
  dtype: ModelDtype;
  path: string;
  bytes: number;
}

/** Downloads a hub model ahead of use (resuming a partial download); the cached copy when whole. */
export async function pullModel(id: string, options: ResolveOptions = {}): Promise<PullResult> {
  if ((BUNDLED_ALIASES as readonly string[]).includes(id)) {
    throw new ValidationError("NOTHING_TO_DOWNLOAD", `"${id}" is the bundled model: it ships with semsearch, there is nothing to download`);
  }
  if (!isHubId(id)) {
    const near = suggestModels(id);
    throw new ValidationError("UNKNOWN_MODEL", `"${id}" is not a Hugging Face model id (owner/name)`, { hint: near.length ? `Did you mean ${near.join(" or ")}?` : undefined });
  }
  const spec = await resolveModelSpec(id, { ...options, download: true });
  const cached = cachedModels().find((model) => model.revision === spec.revision && model.id.toLowerCase() === id.toLowerCase()) as CachedModel;
  return { id: spec.id, revision: spec.revision as string, dtype: spec.dtype as ModelDtype, path: cached.dir, bytes: cached.bytes };
}

/** Removes a downloaded model; ConflictError MODEL_IN_USE while indexes use it, unless forced. */
export function removeModel(id: string, indexes: readonly IndexRecord[], force: boolean): { id: string; bytes: number } {
  const users = indexes.filter((index) => index.embedding?.source === "hub" && index.embedding.id.toLowerCase() === id.toLowerCase());
  if (!cachedModels().some((model) => model.id.toLowerCase() === id.toLowerCase())) {
    throw new NotFoundError("MODEL_NOT_DOWNLOADED", `The model ${id} is not downloaded (models folder: ${modelsDir()})`, { hint: "`semsearch models list` shows what is." });
  }
  if (users.length && !force) {
    throw new ConflictError("MODEL_IN_USE", `The model ${id} is used by ${users.map((index) => index.name ?? index.id).join(", ")}: searching ${users.length === 1 ? "it" : "them"} needs it`, {
      hint: "Delete those indexes first, or pass --force (their searches then fail until the model is pulled again).",
    });
  }
  return { id, bytes: removeCachedModel(id) };
}

