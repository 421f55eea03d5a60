/** The models semsearch knows, by id. */
import { ValidationError } from "../errors.js";
import type { ModelDescriptor } from "./provider.js";
import { USE_DIMENSION, USE_MODEL_ID } from "./use.js";

/** The model of an index created without `--model`. */
export const DEFAULT_MODEL = USE_MODEL_ID;

const MODELS: ModelDescriptor[] = [
  {
    id: USE_MODEL_ID,
    dimension: USE_DIMENSION,
    description: "Universal Sentence Encoder lite, English, 512-d (bundled, offline)",
    load: async () => (await import("./use.js")).loadUniversalSentenceEncoder(),
  },
];

/** Aliases accepted by `--model`. */
const ALIASES: Record<string, string> = { use: USE_MODEL_ID, default: USE_MODEL_ID };

export function listModels(): readonly ModelDescriptor[] {
  return MODELS;
}

/** Finds a model by id or alias; ValidationError UNKNOWN_MODEL otherwise. */
export function resolveModel(name: string): ModelDescriptor {
  const id = (Object.hasOwn(ALIASES, name) ? ALIASES[name] : undefined) ?? name;
  const model = MODELS.find((candidate) => candidate.id === id);
  if (!model) {
    throw new ValidationError("UNKNOWN_MODEL", `Unknown embedding model "${name}". Known: ${MODELS.map((m) => m.id).join(", ")}`, {
      issues: [{ path: "configuration.model", message: `unknown model "${name}"` }],
    });
  }
  return model;
}

const loaded = new Map<string, Promise<import("./provider.js").EmbeddingProvider>>();

/** Loads a model once per thread. */
export function loadModel(id: string) {
  let provider = loaded.get(id);
  if (!provider) {
    provider = resolveModel(id).load();
    loaded.set(id, provider);
  }
  return provider;
}
