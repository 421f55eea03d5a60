/** Entry of one embedding thread: loads a model once, embeds the texts (or fetches, decodes and embeds the images) the pool sends. */
import { parentPort, workerData } from "node:worker_threads";
import { InternalError, toSemsearchError } from "../errors.js";
import { defaultFetchOptions, ImageFetcher } from "../images/fetch.js";
import { ImagePipeline, type ImageOutcome, type ImageRef } from "../images/pipeline.js";
import type { ModelSpec } from "./model-spec.js";
import { embedsImages } from "./provider.js";
import { loadModel } from "./registry.js";

type Request = { id: number; texts: string[] } | { id: number; images: ImageRef[] };

const port = parentPort;
if (!port) throw new Error("embed-thread must run as a worker thread");
const { model, imageCache, imageConcurrency } = workerData as { model: ModelSpec; imageCache: string | null; imageConcurrency: number };
const provider = loadModel(model);
// A model that cannot be loaded fails every request with its own error, not an unhandled rejection.
provider.catch(() => {});

let pipeline: ImagePipeline | undefined;
async function images(refs: ImageRef[]): Promise<ImageOutcome[]> {
  if (!pipeline) {
    const loaded = await provider;
    if (!embedsImages(loaded)) throw new InternalError("NOT_AN_IMAGE_MODEL", `the model ${model.id} does not embed images`);
    pipeline = new ImagePipeline(new ImageFetcher({ ...defaultFetchOptions(imageCache), concurrency: imageConcurrency }), loaded);
  }
  return pipeline.run(refs);
}

port.on("message", async (request: Request) => {
  try {
    const outcomes = "texts" in request ? await (await provider).embedTexts(request.texts) : await images(request.images);
    const buffers = outcomes.flatMap((outcome) => (typeof outcome === "string" ? [] : [outcome.buffer as ArrayBuffer]));
    port.postMessage({ id: request.id, outcomes }, buffers);
  } catch (error) {
    port.postMessage({ id: request.id, error: toSemsearchError(error, "embedding failed").toJSON() });
  }
});
