/**
 * What an index records of its embedding model: everything needed to embed a query later exactly
 * as its objects were embedded. Pure.
 */
import * as v from "valibot";

export const MODEL_DTYPES = ["fp32", "q8"] as const;
export type ModelDtype = (typeof MODEL_DTYPES)[number];

export const POOLINGS = ["mean", "cls"] as const;
export type Pooling = (typeof POOLINGS)[number];

/** Where a model's files come from. */
export type ModelSource = "bundled" | "hub" | "folder";

export const ModelSpecSchema = v.object({
  /** `use-lite-512` (bundled), a Hugging Face id `owner/name`, or the absolute path of a model folder. */
  id: v.pipe(v.string(), v.minLength(1)),
  source: v.picklist(["bundled", "hub", "folder"]),
  /** The hub commit the files were downloaded at. */
  revision: v.optional(v.string()),
  dtype: v.optional(v.picklist(MODEL_DTYPES)),
  /** The ONNX weights file, relative to the model folder, with its size and SHA-256. */
  weights: v.optional(v.object({ file: v.string(), size: v.pipe(v.number(), v.safeInteger(), v.minValue(0)), sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)) })),
  /** SHA-256 over the tokenizer and config files (TOKENIZER_FILES), which shape vectors as much as the weights. */
  tokenizer_sha256: v.optional(v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/))),
  pooling: v.optional(v.picklist(POOLINGS)),
  normalize: v.optional(v.boolean()),
  query_prefix: v.optional(v.string()),
  document_prefix: v.optional(v.string()),
  /** Tokens per model call, special tokens included; longer texts are embedded in windows. */
  window: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(3))),
  dimension: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
});

export type ModelSpec = v.InferOutput<typeof ModelSpecSchema>;

/** The small files besides the weights that decide a model's vectors, hashed together into `tokenizer_sha256`. */
export const TOKENIZER_FILES = ["config.json", "tokenizer.json", "tokenizer_config.json"] as const;
