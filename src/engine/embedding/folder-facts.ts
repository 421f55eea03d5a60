/** What a model folder's config says of the model: for models semsearch does not know. Pure. */
import { ValidationError } from "../errors.js";

/** What a model folder's own files say: for models semsearch does not know. */
export interface FolderFacts {
  dimension: number;
  window: number;
}

/** Reads hidden size and window from a model folder's config and tokenizer config. */
export function readFolderFacts(config: Record<string, unknown>, tokenizerConfig: Record<string, unknown>, dir: string): FolderFacts {
  const number = (value: unknown) => (typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : undefined);
  const dimension = number(config.hidden_size) ?? number(config.d_model) ?? number(config.dim) ?? number(config.n_embd);
  const positions = number(config.max_position_embeddings) ?? number(config.n_positions);
  // Tokenizers with no real limit write a huge sentinel (1e30) as model_max_length.
  const maxLength = number(tokenizerConfig.model_max_length);
  const window = Math.min(positions ?? 512, maxLength !== undefined && maxLength < 1_000_000 ? maxLength : 512);
  if (dimension === undefined) {
    throw new ValidationError("MODEL_UNSUPPORTED", `The model's config.json in ${dir} names no hidden size (hidden_size, a positive whole number)`, {
      hint: "Use a feature-extraction model in transformers.js layout.",
      issues: [{ path: "configuration.model", message: "config.json has no hidden_size" }],
    });
  }
  return { dimension, window };
}
