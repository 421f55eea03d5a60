/**
 * How the worker uses every core to embed, chosen by measurement (`npm run bench:models`, 2 cores):
 * - models that embed one text at a time — the bundled model (one window per call, on onnxruntime) and
 *   q8 ONNX models (one window per call, see transformers.ts) — get a pool of threads,
 *   one per core, each with its own single-threaded copy: chunks of texts go to whichever thread is
 *   free and results come back in input order (q8: 420 texts/s, against 275 for one session with 2
 *   onnxruntime threads, whose small matrix products parallelise poorly);
 * - fp32 ONNX models, which embed sorted batches, get one in-process session with an onnxruntime
 *   thread per core (193 texts/s, against 156 for two single-threaded copies), one copy of the weights;
 * - CLIP models (`npm run bench:images`) get the pool of threads whatever their dtype, each thread
 *   fetching, decoding and embedding its own images: onnxruntime-node blocks the thread it runs on, so
 *   decoding in the same thread as inference cannot overlap it (1 → 2 threads: 28 → 28 images/s in one
 *   session, 20 → 39 in the pool).
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { errorFromPayload, InternalError, type ErrorPayload } from "../errors.js";
import { onEarlyExit } from "../exit-cleanups.js";
import type { ImageOutcome, ImageRef } from "../images/pipeline.js";
import type { ModelSpec } from "./model-spec.js";
import type { EmbedRole } from "./provider.js";
import { takeEarlyThread } from "./early-thread.js";
import { loadModel } from "./registry.js";
import { disableRuntimeTelemetry } from "./runtime-telemetry.js";

/** Texts (or images) sent to a thread at a time: small enough to balance, large enough to amortise messaging. */
const CHUNK = 8;

/** HTTP image requests in flight at once, in all threads together. */
const IMAGE_REQUESTS = 8;

/** What a thread is asked: texts to embed (as documents unless told), or image references to fetch, decode and embed. */
type Work = { texts: string[]; role?: EmbedRole } | { images: ImageRef[] };

interface Task {
  work: Work;
  resolve(outcomes: ImageOutcome[]): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  busy: Task | null;
  /** The thread has loaded its model (or failed to, or ended). */
  loaded: boolean;
  /** Called once the thread is loaded and not busy: only then may it be stopped (see close). */
  onIdle: (() => void)[];
}

export interface EmbeddingPool {
  readonly threads: number;
  embed(texts: readonly string[], role?: EmbedRole): Promise<Float32Array[]>;
  /** CLIP models: fetches, decodes and embeds images, a vector or a reason for each, in order. */
  embedImages?(refs: readonly ImageRef[]): Promise<ImageOutcome[]>;
  close(): Promise<void>;
}

export interface PoolOptions {
  /** Where images downloaded over HTTP are cached (CLIP models; null: no cache). */
  imageCache?: string | null;
  /**
   * Idle threads with their model loaded do not keep the process alive (a one-shot command's query
   * thread). A thread still loading does: a thread stopped inside onnxruntime's model loading
   * aborts or hangs the process.
   */
  unrefIdle?: boolean;
}

/** Threads to use: SEMSEARCH_THREADS, else one per available core. */
export function defaultThreadCount(): number {
  const configured = Number(process.env.SEMSEARCH_THREADS);
  if (Number.isInteger(configured) && configured > 0) return configured;
  return Math.max(1, availableParallelism());
}

export function createEmbeddingPool(model: ModelSpec, threads = defaultThreadCount(), options: PoolOptions = {}): EmbeddingPool {
  // CLIP models too run as one single-threaded copy per core, each fetching, decoding and embedding its
  // own images: onnxruntime-node blocks its thread while it runs, so decoding beside it needs a thread
  // of its own, and the vision tower does more per CPU-second on one thread than on two.
  if (model.kind === "clip") return createThreadPool(model, threads, options);
  return model.source === "bundled" || model.dtype === "q8" ? createThreadPool(model, threads) : createSessionPool(model, threads);
}

/** One session with `threads` onnxruntime threads, in this thread (inference runs off the event loop). */
export function createSessionPool(model: ModelSpec, threads = defaultThreadCount()): EmbeddingPool {
  const provider = loadModel(model, threads);
  provider.catch(() => {}); // reported by embed()
  return {
    threads,
    async embed(texts, role) {
      return (await provider).embedTexts(texts, role);
    },
    async close() {
      // The session stays loaded for this process (the registry shares it); it ends with the process.
    },
  };
}

/** Worker threads, each with its own single-threaded copy of the model. */
export function createThreadPool(model: ModelSpec, threads = defaultThreadCount(), options: PoolOptions = {}): EmbeddingPool {
  const queue: Task[] = [];
  const slots: Slot[] = [];
  let failure: Error | null = null;

  let closing = false;

  const dispatch = () => {
    for (const slot of slots) {
      if (closing || slot.busy || queue.length === 0) continue;
      const task = queue.shift() as Task;
      slot.busy = task;
      if (options.unrefIdle) slot.worker.ref();
      slot.worker.postMessage({ id: 0, ...task.work });
    }
  };

  /** Tells close() a thread may be stopped, once it is loaded and idle; an idle query thread lets the process end. */
  const settle = (slot: Slot) => {
    if (!slot.loaded || slot.busy) return;
    if (options.unrefIdle) slot.worker.unref();
    for (const resolve of slot.onIdle.splice(0)) resolve();
  };

  disableRuntimeTelemetry(); // each thread loads onnxruntime
  for (let i = 0; i < threads; i++) {
    // HTTP requests at once are shared among the threads (8 in all, at least one each).
    const imageConcurrency = Math.max(1, Math.floor(IMAGE_REQUESTS / threads));
    const setup = { model, imageCache: options.imageCache ?? null, imageConcurrency };
    // (the first thread may have been started before the model was known: early-thread.ts)
    const early = i === 0 ? takeEarlyThread() : undefined;
    early?.postMessage({ init: setup });
    early?.ref();
    const worker = early ?? new Worker(new URL("./embed-thread.js", import.meta.url), { workerData: setup });
    const slot: Slot = { worker, busy: null, loaded: false, onIdle: [] };
    worker.on("exit", () => {
      slot.loaded = true;
      slot.busy = null;
      settle(slot);
    });
    worker.on("message", (message: { loaded?: true; outcomes?: ImageOutcome[]; error?: ErrorPayload }) => {
      if (message.loaded) {
        slot.loaded = true;
        settle(slot);
        return;
      }
      const task = slot.busy;
      slot.busy = null;
      if (task) {
        if (message.error) task.reject(errorFromPayload(message.error));
        else task.resolve(message.outcomes as ImageOutcome[]);
      }
      dispatch();
      settle(slot);
    });
    worker.on("error", (error) => {
      failure = new InternalError("EMBEDDING_THREAD_FAILED", `embedding thread failed: ${error.message}`, { cause: error });
      slot.busy?.reject(failure);
      for (const task of queue.splice(0)) task.reject(failure);
    });
    slots.push(slot);
  }

  /** Splits work into chunks for the threads; the results come back in input order. */
  const run = async (work: (start: number, end: number) => Work, count: number): Promise<ImageOutcome[]> => {
    if (failure) throw failure;
    const chunks: Promise<ImageOutcome[]>[] = [];
    for (let start = 0; start < count; start += CHUNK) {
      const part = work(start, Math.min(count, start + CHUNK));
      chunks.push(new Promise((resolve, reject) => queue.push({ work: part, resolve, reject })));
    }
    dispatch();
    return (await Promise.all(chunks)).flat();
  };

  const close = async () => {
    // A thread is stopped only when loaded and idle: stopped inside onnxruntime (loading the model,
    // or running it), the process aborts. Work not yet begun is dropped.
    closing = true;
    unregister();
    const closed = new InternalError("EMBEDDING_POOL_CLOSED", "the embedding threads were stopped");
    for (const task of queue.splice(0)) task.reject(closed);
    await Promise.all(
      slots.map(async (slot) => {
        await new Promise<void>((resolve) => {
          slot.onIdle.push(resolve);
          settle(slot);
        });
        await slot.worker.terminate();
      }),
    );
  };
  // A process that exits early (the CLI, when its reader closes the pipe) stops the threads first.
  const unregister = onEarlyExit(close);

  return {
    threads,
    async embed(texts, role) {
      return (await run((start, end) => ({ texts: texts.slice(start, end), ...(role ? { role } : {}) }), texts.length)) as Float32Array[];
    },
    ...(model.kind === "clip" ? { embedImages: (refs: readonly ImageRef[]) => run((start, end) => ({ images: refs.slice(start, end) }), refs.length) } : {}),
    close,
  };
}
