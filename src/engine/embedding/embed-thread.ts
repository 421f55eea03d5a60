/** Entry of one embedding thread: loads a model once, embeds what the pool sends. */
import { parentPort, workerData } from "node:worker_threads";
import { toSemsearchError } from "../errors.js";
import type { ModelSpec } from "./model-spec.js";
import { loadModel } from "./registry.js";

interface Request {
  id: number;
  texts: string[];
}

const port = parentPort;
if (!port) throw new Error("embed-thread must run as a worker thread");
const provider = loadModel((workerData as { model: ModelSpec }).model);
// A model that cannot be loaded fails every request with its own error, not an unhandled rejection.
provider.catch(() => {});

port.on("message", async (request: Request) => {
  try {
    const vectors = await (await provider).embedTexts(request.texts);
    port.postMessage({ id: request.id, vectors }, vectors.map((vector) => vector.buffer as ArrayBuffer));
  } catch (error) {
    port.postMessage({ id: request.id, error: toSemsearchError(error, "embedding failed").toJSON() });
  }
});
