/**
 * How the worker uses every core to embed, chosen by measurement (`npm run bench:models`, 2 cores):
 * - models that embed one text at a time — the bundled model (TensorFlow.js on WebAssembly, single-
 *   threaded) and q8 ONNX models (one window per call, see transformers.ts) — get a pool of threads,
 *   one per core, each with its own single-threaded copy: chunks of texts go to whichever thread is
 *   free and results come back in input order (q8: 420 texts/s, against 275 for one session with 2
 *   onnxruntime threads, whose small matrix products parallelise poorly);
 * - fp32 ONNX models, which embed sorted batches, get one in-process session with an onnxruntime
 *   thread per core (193 texts/s, against 156 for two single-threaded copies), one copy of the weights.
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { errorFromPayload, InternalError, type ErrorPayload } from "../errors.js";
import type { ModelSpec } from "./model-spec.js";
import { loadModel } from "./registry.js";

/** Texts sent to a thread at a time: small enough to balance, large enough to amortise messaging. */
const CHUNK = 8;

interface Task {
  texts: string[];
  resolve(vectors: Float32Array[]): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  busy: Task | null;
}

export interface EmbeddingPool {
  readonly threads: number;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  close(): Promise<void>;
}

/** Threads to use: SEMSEARCH_THREADS, else one per available core. */
export function defaultThreadCount(): number {
  const configured = Number(process.env.SEMSEARCH_THREADS);
  if (Number.isInteger(configured) && configured > 0) return configured;
  return Math.max(1, availableParallelism());
}

export function createEmbeddingPool(model: ModelSpec, threads = defaultThreadCount()): EmbeddingPool {
  // CLIP models embed images in this process (indexing/images.ts): their text tower shares that session.
  if (model.kind === "clip") return createSessionPool(model, threads);
  return model.source === "bundled" || model.dtype === "q8" ? createThreadPool(model, threads) : createSessionPool(model, threads);
}

/** One session with `threads` onnxruntime threads, in this thread (inference runs off the event loop). */
export function createSessionPool(model: ModelSpec, threads = defaultThreadCount()): EmbeddingPool {
  const provider = loadModel(model, threads);
  provider.catch(() => {}); // reported by embed()
  return {
    threads,
    async embed(texts) {
      return (await provider).embedTexts(texts);
    },
    async close() {
      // The session stays loaded for this process (the registry shares it); it ends with the process.
    },
  };
}

/** Worker threads, each with its own single-threaded copy of the model. */
export function createThreadPool(model: ModelSpec, threads = defaultThreadCount()): EmbeddingPool {
  const queue: Task[] = [];
  const slots: Slot[] = [];
  let failure: Error | null = null;

  const dispatch = () => {
    for (const slot of slots) {
      if (slot.busy || queue.length === 0) continue;
      const task = queue.shift() as Task;
      slot.busy = task;
      slot.worker.postMessage({ id: 0, texts: task.texts });
    }
  };

  for (let i = 0; i < threads; i++) {
    const worker = new Worker(new URL("./embed-thread.js", import.meta.url), { workerData: { model } });
    const slot: Slot = { worker, busy: null };
    worker.on("message", (message: { vectors?: Float32Array[]; error?: ErrorPayload }) => {
      const task = slot.busy;
      slot.busy = null;
      if (task) {
        if (message.error) task.reject(errorFromPayload(message.error));
        else task.resolve(message.vectors as Float32Array[]);
      }
      dispatch();
    });
    worker.on("error", (error) => {
      failure = new InternalError("EMBEDDING_THREAD_FAILED", `embedding thread failed: ${error.message}`, { cause: error });
      slot.busy?.reject(failure);
      for (const task of queue.splice(0)) task.reject(failure);
    });
    slots.push(slot);
  }

  return {
    threads,
    async embed(texts) {
      if (failure) throw failure;
      const chunks: Promise<Float32Array[]>[] = [];
      for (let start = 0; start < texts.length; start += CHUNK) {
        const chunk = texts.slice(start, start + CHUNK);
        chunks.push(new Promise((resolve, reject) => queue.push({ texts: chunk, resolve, reject })));
      }
      dispatch();
      return (await Promise.all(chunks)).flat();
    },
    async close() {
      await Promise.all(slots.map((slot) => slot.worker.terminate()));
    },
  };
}
