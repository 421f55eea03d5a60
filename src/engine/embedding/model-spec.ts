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

/** What a model embeds: text only, or text and images in one space (CLIP: a text tower and a vision tower). */
export const MODEL_KINDS = ["text", "clip"] as const;
export type ModelKind = (typeof MODEL_KINDS)[number];

const WeightsSchema = v.object({ file: v.string(), size: v.pipe(v.number(), v.safeInteger(), v.minValue(0)), sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)) });

export const ModelSpecSchema = v.object({
  /** `use-lite-512` (bundled), a Hugging Face id `owner/name`, or the absolute path of a model folder. */
  id: v.pipe(v.string(), v.minLength(1)),
  source: v.picklist(["bundled", "hub", "folder"]),
  /** The hub commit the files were downloaded at. */
  revision: v.optional(v.string()),
  dtype: v.optional(v.picklist(MODEL_DTYPES)),
  /** `clip` for image-text models; absent for text models. */
  kind: v.optional(v.picklist(MODEL_KINDS)),
  /** The ONNX weights file (a CLIP model's text tower), relative to the model folder, with its size and SHA-256. */
  weights: v.optional(WeightsSchema),
  /** A CLIP model's vision tower, like `weights`. */
  vision_weights: v.optional(WeightsSchema),
  /** SHA-256 over the tokenizer and config files (hashedFiles), which shape vectors as much as the weights. */
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

/** A CLIP model's image preprocessing (resize, crop, mean and std) shapes its image vectors too. */
export const CLIP_FILES = [...TOKENIZER_FILES, "preprocessor_config.json"] as const;

/** The small files hashed into `tokenizer_sha256` for a model of this kind. */
export function hashedFiles(kind: ModelKind | undefined): readonly string[] {
  return kind === "clip" ? CLIP_FILES : TOKENIZER_FILES;
}

/** The ONNX weights files of each dtype, by tower: a text model has one, a CLIP model two. */
export const WEIGHTS_FILES: Record<ModelDtype, string> = { q8: "onnx/model_quantized.onnx", fp32: "onnx/model.onnx" };
export const CLIP_WEIGHTS_FILES: Record<"text" | "vision", Record<ModelDtype, string>> = {
  text: { q8: "onnx/text_model_quantized.onnx", fp32: "onnx/text_model.onnx" },
  vision: { q8: "onnx/vision_model_quantized.onnx", fp32: "onnx/vision_model.onnx" },
};

/** Every weights file a model of this kind needs at a dtype. */
export function weightsFiles(kind: ModelKind | undefined, dtype: ModelDtype): string[] {
  return kind === "clip" ? [CLIP_WEIGHTS_FILES.text[dtype], CLIP_WEIGHTS_FILES.vision[dtype]] : [WEIGHTS_FILES[dtype]];
}
