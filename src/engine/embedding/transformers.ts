/**
 * Hugging Face ONNX embedding models, run by transformers.js (`@huggingface/transformers`) on
 * onnxruntime-node's CPU backend. The only importer of transformers.js, and only ever imported
 * lazily, so indexes of the bundled model never load it.
 *
 * transformers.js is always given an absolute model folder and never allowed to download:
 * downloads are semsearch's own (hub.ts), checked and resumable. Its text models need no image
 * library, but its bundle imports `sharp` at load; on a text path a stand-in that fails if ever
 * called takes sharp's place, so sharp's native library is not loaded.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { EnvironmentError, InternalError, SemsearchError, ValidationError } from "../errors.js";
import { modelsDir, verifyModelFiles } from "./model-cache.js";
import { firstNotJson, readModelJson } from "./model-json.js";
import { weightsFiles, type ModelSpec } from "./model-spec.js";
import { combineWindows, findWrapping, poolTokens, splitWindows, type TokenWindow, type Wrapping } from "./pooling.js";
import { normalise, type EmbeddingProvider, type EmbedRole, type ImageEmbeddingProvider } from "./provider.js";
import { parsePreprocessorConfig, type ClipPreprocessConfig } from "../images/preprocess-config.js";
import { disableRuntimeTelemetry } from "./runtime-telemetry.js";

type Transformers = typeof import("@huggingface/transformers");
type Tokenizer = Awaited<ReturnType<Transformers["AutoTokenizer"]["from_pretrained"]>>;
type Model = Awaited<ReturnType<Transformers["AutoModel"]["from_pretrained"]>>;

const require = createRequire(import.meta.url);
let runtime: Transformers | undefined;

/** Marks the stand-in that takes sharp's place on text paths. */
export const SHARP_STAND_IN = Symbol.for("semsearch.sharpStandIn");

/**
 * Loads transformers.js once per thread, configured never to download and never to write into
 * node_modules. Unless `images` (image indexes decode with sharp themselves, images/decode.ts), sharp's
 * native library is kept out: a stand-in that fails if ever called takes its place in the require cache.
 */
function loadRuntime(images = false): Transformers {
  if (runtime) return runtime;
  let sharpPath: string | null = null;
  try {
    sharpPath = require.resolve("sharp");
  } catch {
    // not installed: transformers.js then loads without image support
  }
  if (sharpPath && !require.cache[sharpPath] && !images) {
    const Module = require("node:module") as typeof import("node:module") & { new (id: string): NodeJS.Module };
    const stub = new Module(sharpPath);
    stub.filename = sharpPath;
    stub.loaded = true;
    stub.exports = Object.assign(
      function sharpNotLoaded() {
        throw new InternalError("SHARP_NOT_LOADED", "image processing was asked of a text-only model runtime");
      },
      { [SHARP_STAND_IN]: true },
    );
    require.cache[sharpPath] = stub;
  }
  disableRuntimeTelemetry(); // transformers.js loads onnxruntime-node
  const loaded = require("@huggingface/transformers") as Transformers;
  loaded.env.allowRemoteModels = false;
  // Its failures reach the user as semsearch's own errors; its log (inputs dumped on stderr) only when debugging.
  if (!process.env.SEMSEARCH_DEBUG) loaded.env.logLevel = loaded.LogLevel.NONE;
  loaded.env.allowLocalModels = true;
  loaded.env.useFSCache = false;
  loaded.env.useBrowserCache = false;
  loaded.env.cacheDir = modelsDir();
  loaded.env.localModelPath = modelsDir();
  runtime = loaded;
  return loaded;
}

/**
 * Windows per model call: fp32 models get sorted batches of up to 16 windows and 4,096 tokens with
 * padding (measured 11% faster than one window per call on MiniLM's shape); q8 models one window per
 * call, which measured as fast or faster and keeps a text's vector independent of its batch-mates
 * (dynamic quantization picks one scale per call).
 */
const BATCH_WINDOWS = { fp32: 16, q8: 1 } as const;
const BATCH_TOKENS = 4096;

/** Groups windows (sorted by length, so padding is small) into model calls. */
function batches(windows: readonly TokenWindow[], maxWindows: number): number[][] {
  const order = windows.map((_, i) => i).sort((a, b) => (windows[a] as TokenWindow).ids.length - (windows[b] as TokenWindow).ids.length);
  const out: number[][] = [];
  let current: number[] = [];
  for (const i of order) {
    const length = (windows[i] as TokenWindow).ids.length;
    if (current.length > 0 && (current.length >= maxWindows || (current.length + 1) * length > BATCH_TOKENS)) {
      out.push(current);
      current = [];
    }
    current.push(i);
  }
  if (current.length) out.push(current);
  return out;
}

class TransformersModel implements EmbeddingProvider {
  readonly id: string;
  readonly dimension: number;

  constructor(
    protected readonly tf: Transformers,
    protected readonly spec: ModelSpec,
    protected readonly tokenizer: Tokenizer,
    protected readonly model: Model,
    private readonly wrapping: Wrapping,
    protected readonly window: number,
  ) {
    this.id = spec.id;
    this.dimension = spec.dimension;
  }

  async embedTexts(texts: readonly string[], role: EmbedRole = "document"): Promise<Float32Array[]> {
    const prefix = (role === "query" ? this.spec.query_prefix : this.spec.document_prefix) ?? "";
    const ids = texts.map((text) => {
      try {
        return this.tokenizer.encode(prefix + text, { add_special_tokens: false }) as number[];
      } catch (error) {
        // transformers.js's message may quote the tokenizer's files (a token, a type): only the cause keeps it
        throw new Error(`the tokenizer failed on a text of ${text.length} characters`, { cause: error });
      }
    });
    const windows = splitWindows(ids, this.window, this.wrapping);
    const vectors: Float32Array[] = new Array(windows.length);
    for (const batch of batches(windows, BATCH_WINDOWS[this.spec.dtype ?? "fp32"])) {
      const pooled = await this.run(batch.map((i) => (windows[i] as TokenWindow).ids));
      batch.forEach((windowIndex, row) => (vectors[windowIndex] = pooled[row] as Float32Array));
    }
    return combineWindows(windows, vectors, texts.length, this.spec.normalize !== false);
  }

  /** Runs the model on sequences of token ids (padded to the longest) and pools each. */
  protected async run(sequences: number[][]): Promise<Float32Array[]> {
    const { Tensor } = this.tf;
    const length = this.paddedLength(sequences);
    const inputIds = new BigInt64Array(sequences.length * length).fill(BigInt(this.padId));
    const mask = new BigInt64Array(sequences.length * length);
    sequences.forEach((sequence, row) => {
      sequence.forEach((id, t) => {
        inputIds[row * length + t] = BigInt(id);
        mask[row * length + t] = 1n;
      });
    });
    const dims = [sequences.length, length];
    const output = (await this.model({ input_ids: new Tensor("int64", inputIds, dims), attention_mask: new Tensor("int64", mask, dims) }).catch((error: unknown) => {
      throw runFailure(`${sequences.length === 1 ? "a window" : `${sequences.length} windows`} of ${length} tokens`, error);
    })) as Record<string, import("@huggingface/transformers").Tensor>;
    try {
      return this.vectorsOf(output, sequences);
    } finally {
      for (const tensor of Object.values(output)) tensor.dispose?.();
    }
  }

  /** Sequences of a call are padded to the longest. */
  protected paddedLength(sequences: number[][]): number {
    return Math.max(...sequences.map((sequence) => sequence.length));
  }

  /** The token id padding is filled with (masked out). */
  protected get padId(): number {
    return 0;
  }

  /** Checks a vector length the model gives against the one the index was built with. */
  protected checkDimension(dimension: number): void {
    // Dimension 0: the model is being probed for its dimension.
    if (this.dimension !== 0 && dimension !== this.dimension) {
      throw new EnvironmentError("MODEL_CHANGED", `The model ${this.spec.id} gives ${dimension}-d vectors, but the index was built with ${this.dimension}-d ones`, {
        hint: "The model's files are not the ones the index was built with; create a new index for this model.",
      });
    }
  }

  /** One vector per sequence: the token vectors, pooled. */
  protected vectorsOf(output: Record<string, import("@huggingface/transformers").Tensor>, sequences: number[][]): Float32Array[] {
    const hidden = output.last_hidden_state ?? output.token_embeddings ?? Object.values(output).find((tensor) => tensor.dims.length === 3);
    if (!hidden) throw new ValidationError("MODEL_UNSUPPORTED", `The model ${this.spec.id} gives no token vectors (no output of shape [texts, tokens, dimension])`, { hint: "Use a feature-extraction (embedding) model." });
    const [, sequenceLength, dimension] = hidden.dims as [number, number, number];
    this.checkDimension(dimension);
    const data = hidden.data as Float32Array;
    const pooling = this.spec.pooling ?? "mean";
    return sequences.map((sequence, row) => {
      const rowData = data.subarray(row * sequenceLength * dimension, (row + 1) * sequenceLength * dimension);
      return poolTokens(rowData, sequence.length, dimension, pooling);
    });
  }

  async dispose(): Promise<void> {
    await this.model.dispose();
  }
}

/**
 * A CLIP-family model: its text tower embeds texts (queries, text highlight segments), its vision tower
 * images, into one space. The text tower gives one pooled, projected vector per window (CLIP pools at
 * the end-of-text token; SigLIP expects every window padded to its full length). The vision tower is
 * loaded on first use, so searches, which embed text only, never load it.
 */
class ClipModel extends TransformersModel implements ImageEmbeddingProvider {
  private vision: Promise<{ vision: Model; preprocess: ClipPreprocessConfig }> | undefined;

  constructor(
    tf: Transformers,
    spec: ModelSpec,
    tokenizer: Tokenizer,
    model: Model,
    wrapping: Wrapping,
    window: number,
    private readonly padToWindow: boolean,
    private readonly loadVision: () => Promise<{ vision: Model; preprocess: ClipPreprocessConfig }>,
  ) {
    super(tf, spec, tokenizer, model, wrapping, window);
  }

  protected override paddedLength(sequences: number[][]): number {
    return this.padToWindow ? this.window : super.paddedLength(sequences);
  }

  protected override get padId(): number {
    const id = (this.tokenizer as unknown as { pad_token_id?: number }).pad_token_id;
    return this.padToWindow && typeof id === "number" ? id : 0;
  }

  protected override vectorsOf(output: Record<string, import("@huggingface/transformers").Tensor>): Float32Array[] {
    return this.rows(output.text_embeds ?? output.pooler_output);
  }

  /** The rows of a [batch, dimension] output. */
  private rows(tensor: import("@huggingface/transformers").Tensor | undefined): Float32Array[] {
    if (!tensor || tensor.dims.length !== 2) {
      throw new ValidationError("MODEL_UNSUPPORTED", `The model ${this.spec.id} gives no pooled vectors (no text_embeds, image_embeds or pooler_output of shape [items, dimension])`, { hint: "Use a CLIP model exported with projections (text_embeds, image_embeds), as the Xenova/clip-… conversions are." });
    }
    const [rows, dimension] = tensor.dims as [number, number];
    this.checkDimension(dimension);
    const data = tensor.data as Float32Array;
    return Array.from({ length: rows }, (_, row) => Float32Array.from(data.subarray(row * dimension, (row + 1) * dimension)));
  }

  async imageInput(): Promise<ClipPreprocessConfig> {
    return (await this.visionTower()).preprocess;
  }

  private visionTower() {
    this.vision ??= this.loadVision();
    this.vision.catch(() => (this.vision = undefined));
    return this.vision;
  }

  async embedImages(pixels: readonly Float32Array[]): Promise<Float32Array[]> {
    if (pixels.length === 0) return [];
    const { vision, preprocess } = await this.visionTower();
    const { Tensor } = this.tf;
    const size = 3 * preprocess.height * preprocess.width;
    const data = new Float32Array(pixels.length * size);
    pixels.forEach((image, i) => {
      if (image.length !== size) throw new InternalError("BAD_PIXELS", `image ${i} has ${image.length} values, expected ${size}`);
      data.set(image, i * size);
    });
    const output = (await vision({ pixel_values: new Tensor("float32", data, [pixels.length, 3, preprocess.height, preprocess.width]) }).catch((error: unknown) => {
      throw runFailure(`${pixels.length === 1 ? "an image" : `${pixels.length} images`} of ${preprocess.width} × ${preprocess.height} pixels`, error);
    })) as Record<string, import("@huggingface/transformers").Tensor>;
    try {
      return this.rows(output.image_embeds ?? output.pooler_output).map(normalise);
    } finally {
      for (const tensor of Object.values(output)) tensor.dispose?.();
    }
  }

  override async dispose(): Promise<void> {
    const vision = this.vision;
    this.vision = undefined;
    await Promise.all([super.dispose(), vision?.then(({ vision: model }) => model.dispose(), () => {})]);
  }
}

/**
 * Loads a model recorded by an index (or about to be): checks its files first (MODEL_MISSING,
 * MODEL_CHANGED), then reads tokenizer and weights from its folder. `threads` is onnxruntime's
 * intra-op thread count for this session.
 */
export async function loadTransformersModel(spec: ModelSpec, threads = 1): Promise<EmbeddingProvider> {
  const dir = await verifyModelFiles(spec);
  if (dir === null) throw new InternalError("INTERNAL", `model ${spec.id} has no folder`);
  const tf = loadRuntime(spec.kind === "clip");
  const options = {
    local_files_only: true,
    device: "cpu" as const,
    ...(spec.dtype ? { dtype: spec.dtype } : {}),
    session_options: { intraOpNumThreads: threads, interOpNumThreads: 1 },
  };
  const [textWeights, visionWeights] = weightsFiles(spec.kind, spec.dtype ?? "fp32");
  let tokenizer: Tokenizer;
  try {
    tokenizer = await tf.AutoTokenizer.from_pretrained(dir, { local_files_only: true });
  } catch (error) {
    throw unreadable(spec, dir, "tokenizer", ["tokenizer.json", "tokenizer_config.json"], error);
  }
  const type = spec.kind === "clip" ? readModelJson(path.join(dir, "config.json"))?.model_type : undefined;
  let model: Model;
  try {
    model = await (spec.kind !== "clip" ? tf.AutoModel : type === "siglip" ? tf.SiglipTextModel : tf.CLIPTextModelWithProjection).from_pretrained(dir, options);
  } catch (error) {
    throw unreadable(spec, dir, spec.kind === "clip" ? "text tower" : "model", [spec.weights?.file ?? (textWeights as string), "config.json"], error);
  }
  const probe = "hello world";
  let encoded: [number[], number[]];
  try {
    encoded = [tokenizer.encode(probe, { add_special_tokens: false }) as number[], tokenizer.encode(probe) as number[]];
  } catch (error) {
    throw unreadable(spec, dir, "tokenizer", ["tokenizer.json", "tokenizer_config.json"], error);
  }
  const wrapping = findWrapping(...encoded);
  if (spec.kind !== "clip") return new TransformersModel(tf, spec, tokenizer, model, wrapping, spec.window ?? 512);
  const loadVision = async () => {
    const preprocess = parsePreprocessorConfig(readModelJson(path.join(dir, "preprocessor_config.json")) ?? null);
    try {
      return { vision: await (type === "siglip" ? tf.SiglipVisionModel : tf.CLIPVisionModelWithProjection).from_pretrained(dir, options), preprocess };
    } catch (error) {
      throw unreadable(spec, dir, "vision tower", [spec.vision_weights?.file ?? (visionWeights as string), "config.json"], error);
    }
  };
  return new ClipModel(tf, spec, tokenizer, model, wrapping, spec.window ?? 77, type === "siglip", loadVision);
}

/**
 * Why a model's files could not be loaded, naming the files and never quoting them: the runtime's
 * own message (kept as `cause`) may quote a file's text (JSON.parse's does, transformers.js names
 * unknown types, onnxruntime node names), and a model folder may be any file on disk.
 */
function unreadable(spec: ModelSpec, dir: string, part: string, files: readonly string[], error: unknown): EnvironmentError {
  if (error instanceof EnvironmentError) return error;
  const notJson = firstNotJson(files.filter((file) => file.endsWith(".json")).map((file) => path.join(dir, file)));
  if (notJson) return notJson;
  return new EnvironmentError("MODEL_UNREADABLE", `Cannot load the model ${spec.id}${spec.source === "folder" ? "" : ` from ${dir}`}: its ${part} (${files.join(", ")}) cannot be loaded`, {
    hint:
      spec.kind === "clip"
        ? "The folder must hold a transformers.js CLIP model: config.json, tokenizer.json, tokenizer_config.json, preprocessor_config.json, onnx/text_model.onnx and onnx/vision_model.onnx (or their _quantized files)."
        : "The folder must hold a transformers.js model: config.json, tokenizer.json, tokenizer_config.json and onnx/model.onnx (or model_quantized.onnx).",
    cause: error,
  });
}

/**
 * A model that failed on some input: what it was given, and the runtime's message only as `cause`
 * (onnxruntime's names the graph's nodes, which are the model file's text).
 */
function runFailure(input: string, error: unknown): Error {
  if (error instanceof SemsearchError) return error;
  return new Error(`onnxruntime failed to run the model on ${input}`, { cause: error });
}
