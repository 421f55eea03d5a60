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
import { EnvironmentError, InternalError, ValidationError } from "../errors.js";
import { modelsDir, verifyModelFiles } from "./model-cache.js";
import type { ModelSpec } from "./model-spec.js";
import { combineWindows, findWrapping, poolTokens, splitWindows, type TokenWindow, type Wrapping } from "./pooling.js";
import type { EmbeddingProvider, EmbedRole } from "./provider.js";

type Transformers = typeof import("@huggingface/transformers");
type Tokenizer = Awaited<ReturnType<Transformers["AutoTokenizer"]["from_pretrained"]>>;
type Model = Awaited<ReturnType<Transformers["AutoModel"]["from_pretrained"]>>;

const require = createRequire(import.meta.url);
let runtime: Transformers | undefined;

/** Loads transformers.js once per thread, configured never to download and never to write into node_modules. */
function loadRuntime(): Transformers {
  if (runtime) return runtime;
  let sharpPath: string | null = null;
  try {
    sharpPath = require.resolve("sharp");
  } catch {
    // not installed: transformers.js then loads without image support
  }
  if (sharpPath && !require.cache[sharpPath]) {
    const Module = require("node:module") as typeof import("node:module") & { new (id: string): NodeJS.Module };
    const stub = new Module(sharpPath);
    stub.filename = sharpPath;
    stub.loaded = true;
    stub.exports = function sharpNotLoaded() {
      throw new InternalError("SHARP_NOT_LOADED", "image processing was asked of a text-only model runtime");
    };
    require.cache[sharpPath] = stub;
  }
  const loaded = require("@huggingface/transformers") as Transformers;
  loaded.env.allowRemoteModels = false;
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
    private readonly tf: Transformers,
    private readonly spec: ModelSpec,
    private readonly tokenizer: Tokenizer,
    private readonly model: Model,
    private readonly wrapping: Wrapping,
    private readonly window: number,
  ) {
    this.id = spec.id;
    this.dimension = spec.dimension;
  }

  async embedTexts(texts: readonly string[], role: EmbedRole = "document"): Promise<Float32Array[]> {
    const prefix = (role === "query" ? this.spec.query_prefix : this.spec.document_prefix) ?? "";
    const ids = texts.map((text) => this.tokenizer.encode(prefix + text, { add_special_tokens: false }) as number[]);
    const windows = splitWindows(ids, this.window, this.wrapping);
    const vectors: Float32Array[] = new Array(windows.length);
    for (const batch of batches(windows, BATCH_WINDOWS[this.spec.dtype ?? "fp32"])) {
      const pooled = await this.run(batch.map((i) => (windows[i] as TokenWindow).ids));
      batch.forEach((windowIndex, row) => (vectors[windowIndex] = pooled[row] as Float32Array));
    }
    return combineWindows(windows, vectors, texts.length, this.spec.normalize !== false);
  }

  /** Runs the model on sequences of token ids (padded to the longest) and pools each. */
  private async run(sequences: number[][]): Promise<Float32Array[]> {
    const { Tensor } = this.tf;
    const length = Math.max(...sequences.map((sequence) => sequence.length));
    const inputIds = new BigInt64Array(sequences.length * length);
    const mask = new BigInt64Array(sequences.length * length);
    sequences.forEach((sequence, row) => {
      sequence.forEach((id, t) => {
        inputIds[row * length + t] = BigInt(id);
        mask[row * length + t] = 1n;
      });
    });
    const dims = [sequences.length, length];
    const output = (await this.model({ input_ids: new Tensor("int64", inputIds, dims), attention_mask: new Tensor("int64", mask, dims) })) as Record<string, import("@huggingface/transformers").Tensor>;
    const hidden = output.last_hidden_state ?? output.token_embeddings ?? Object.values(output).find((tensor) => tensor.dims.length === 3);
    if (!hidden) throw new ValidationError("MODEL_UNSUPPORTED", `The model ${this.spec.id} gives no token vectors (outputs: ${Object.keys(output).join(", ")})`, { hint: "Use a feature-extraction (embedding) model." });
    const [, sequenceLength, dimension] = hidden.dims as [number, number, number];
    // Dimension 0: the model is being probed for its dimension.
    if (this.dimension !== 0 && dimension !== this.dimension) {
      throw new EnvironmentError("MODEL_CHANGED", `The model ${this.spec.id} gives ${dimension}-d vectors, but the index was built with ${this.dimension}-d ones`, {
        hint: "The model's files are not the ones the index was built with; create a new index for this model.",
      });
    }
    const data = hidden.data as Float32Array;
    const pooling = this.spec.pooling ?? "mean";
    const out = sequences.map((sequence, row) => {
      const rowData = data.subarray(row * sequenceLength * dimension, (row + 1) * sequenceLength * dimension);
      return poolTokens(rowData, sequence.length, dimension, pooling);
    });
    for (const tensor of Object.values(output)) tensor.dispose?.();
    return out;
  }

  async dispose(): Promise<void> {
    await this.model.dispose();
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
  const tf = loadRuntime();
  let tokenizer: Tokenizer;
  let model: Model;
  try {
    tokenizer = await tf.AutoTokenizer.from_pretrained(dir, { local_files_only: true });
    model = await tf.AutoModel.from_pretrained(dir, {
      local_files_only: true,
      device: "cpu",
      ...(spec.dtype ? { dtype: spec.dtype } : {}),
      session_options: { intraOpNumThreads: threads, interOpNumThreads: 1 },
    });
  } catch (error) {
    throw new EnvironmentError("MODEL_UNREADABLE", `Cannot load the model ${spec.id}${spec.source === "folder" ? "" : ` from ${dir}`}: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`, {
      hint: "The folder must hold a transformers.js model: config.json, tokenizer.json, tokenizer_config.json and onnx/model.onnx (or model_quantized.onnx).",
      cause: error,
    });
  }
  const probe = "hello world";
  const wrapping = findWrapping(tokenizer.encode(probe, { add_special_tokens: false }) as number[], tokenizer.encode(probe) as number[]);
  return new TransformersModel(tf, spec, tokenizer, model, wrapping, spec.window ?? 512);
}
