/** Entry of one embedding thread: loads a model once, embeds the texts (or fetches, decodes and embeds the images) the pool sends. */
import { parentPort, workerData } from "node:worker_threads";
import { InternalError, toSemsearchError } from "../errors.js";
import type { ImageOutcome, ImagePipeline, ImageRef } from "../images/pipeline.js";
import type { ModelSpec } from "./model-spec.js";
import { embedsImages, type EmbedRole } from "./provider.js";
import { loadModel } from "./registry.js";

type Request = { id: number; texts: string[]; role?: EmbedRole } | { id: number; images: ImageRef[] };

/** What a thread is for: given when it starts, or (a thread started early, early-thread.ts) in its first message. */
interface Setup {
  model: ModelSpec;
  imageCache: string | null;
  imageConcurrency: number;
}

const port = parentPort;
if (!port) throw new Error("embed-thread must run as a worker thread");
const given = workerData as Setup | { model: null };
let named: (setup: Setup) => void = () => {};
const setup: Promise<Setup> = given.model ? Promise.resolve(given as Setup) : new Promise((resolve) => (named = resolve));
const provider = setup.then(({ model }) => loadModel(model, 1));
// The pool learns when the model is loaded (or failed to load): only then may the thread be stopped.
// A model that cannot be loaded fails every request with its own error, not an unhandled rejection.
provider.then(
  () => port.postMessage({ loaded: true }),
  () => port.postMessage({ loaded: true }),
);

let pipeline: ImagePipeline | undefined;
async function images(refs: ImageRef[]): Promise<ImageOutcome[]> {
  if (!pipeline) {
    const [loaded, { model, imageCache, imageConcurrency }] = await Promise.all([provider, setup]);
    if (!embedsImages(loaded)) throw new InternalError("NOT_AN_IMAGE_MODEL", `the model ${model.id} does not embed images`);
    // Image code is loaded by image work only: a text thread starts without it.
    const [{ ImagePipeline }, { defaultFetchOptions, ImageFetcher }] = await Promise.all([import("../images/pipeline.js"), import("../images/fetch.js")]);
    pipeline ??= new ImagePipeline(new ImageFetcher({ ...defaultFetchOptions(imageCache), concurrency: imageConcurrency }), loaded);
  }
  return pipeline.run(refs);
}

port.on("message", async (request: Request | { init: Setup }) => {
  if ("init" in request) return named(request.init);
  try {
    const outcomes = "texts" in request ? await (await provider).embedTexts(request.texts, request.role) : await images(request.images);
    const buffers = outcomes.flatMap((outcome) => (typeof outcome === "string" ? [] : [outcome.buffer as ArrayBuffer]));
    port.postMessage({ id: request.id, outcomes }, buffers);
  } catch (error) {
    port.postMessage({ id: request.id, error: toSemsearchError(error, "embedding failed").toJSON() });
  }
});
