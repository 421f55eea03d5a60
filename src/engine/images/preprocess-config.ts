/**
 * A CLIP-style image processor's settings, read from a Hugging Face `preprocessor_config.json`:
 * what images/decode.ts needs to turn an image into a vision model's `pixel_values` row. Pure.
 */
import * as v from "valibot";
import { checkContent } from "../content-issues.js";
import { ValidationError } from "../errors.js";

/** The sharp kernels used for PIL's `resample` filters. */
export type ResizeKernel = "nearest" | "linear" | "cubic" | "lanczos3";

/**
 * PIL filter number → sharp kernel. sharp's `cubic` is Catmull-Rom (a = −0.5), PIL's BICUBIC
 * kernel; `linear` is the triangle filter of PIL's BILINEAR. sharp has no box or Hamming filter:
 * both get `linear`, the closest small-support filter (transformers.js substitutes bilinear too).
 */
const KERNELS: Record<number, ResizeKernel> = { 0: "nearest", 1: "lanczos3", 2: "linear", 3: "cubic", 4: "linear", 5: "linear" };

export interface ClipPreprocessConfig {
  /** Before cropping: the shorter side to `shortestEdge` px keeping the aspect ratio, or exactly `width` × `height` px; null: no resize. */
  resize: { shortestEdge: number } | { width: number; height: number } | null;
  /** The resampling kernel (from the config's `resample`, PIL's numbering). */
  kernel: ResizeKernel;
  /** The centre crop in px, padded with black where the resized image is smaller; null: no crop. */
  crop: { width: number; height: number } | null;
  /** Each 0–255 value is multiplied by this first: `rescale_factor` (1/255), or 1 when `do_rescale` is false. */
  rescaleFactor: number;
  /** Subtracted per channel (R, G, B) after rescaling; 0 when `do_normalize` is false. */
  mean: readonly [number, number, number];
  /** Divides per channel after subtracting the mean; 1 when `do_normalize` is false. */
  std: readonly [number, number, number];
  /** The output's size in px: the crop, else the fixed resize. Every image gives `3 × height × width` values. */
  width: number;
  height: number;
}

/** Sizes in a preprocessor config: vision models take inputs of a few hundred pixels; more is a mistake. */
export const MAX_INPUT_PIXELS = 4096;
const Pixels = v.pipe(v.number(), v.safeInteger(), v.minValue(1), v.maxValue(MAX_INPUT_PIXELS));
const Finite = v.pipe(v.number(), v.finite());
const Positive = v.pipe(v.number(), v.finite(), v.gtValue(0));
const PerChannel = <T extends typeof Finite | typeof Positive>(item: T) =>
  v.union([item, v.strictTuple([item, item, item])], "expected a number or an array of 3 numbers (R, G, B)");
const SIZE_FORMS = 'expected a whole number of pixels, {"shortest_edge": n} or {"height": h, "width": w}';
const UNSUPPORTED_STEP = "semsearch does not implement this step; it must be absent or false";

const PreprocessorSchema = v.object({
  do_resize: v.optional(v.boolean()),
  size: v.optional(v.union([Pixels, v.strictObject({ shortest_edge: Pixels }), v.strictObject({ height: Pixels, width: Pixels })], SIZE_FORMS)),
  resample: v.optional(v.picklist([0, 1, 2, 3, 4, 5], "expected a PIL filter number 0–5 (3 = bicubic)"), 2),
  do_center_crop: v.optional(v.boolean(), false),
  crop_size: v.optional(v.union([Pixels, v.strictObject({ height: Pixels, width: Pixels })], 'expected a whole number of pixels or {"height": h, "width": w}')),
  do_rescale: v.optional(v.boolean(), true),
  rescale_factor: v.optional(Positive, 1 / 255),
  do_normalize: v.optional(v.boolean(), false),
  image_mean: v.optional(PerChannel(Finite)),
  image_std: v.optional(PerChannel(Positive)),
  /** Ignored: the vision model takes 3 channels, so images always become RGB. */
  do_convert_rgb: v.optional(v.boolean()),
  do_pad: v.optional(v.literal(false, UNSUPPORTED_STEP)),
  do_thumbnail: v.optional(v.literal(false, UNSUPPORTED_STEP)),
  do_crop_margin: v.optional(v.literal(false, UNSUPPORTED_STEP)),
  do_flip_channel_order: v.optional(v.literal(false, UNSUPPORTED_STEP)),
});
type PreprocessorJson = v.InferOutput<typeof PreprocessorSchema>;

/**
 * Reads a Hugging Face `preprocessor_config.json` (already JSON-decoded) for a CLIP-style image
 * processor. A missing field means what it means to transformers.js's ImageProcessor (resample 2,
 * no centre crop, rescale by 1/255, no normalisation). A number `size` is the shortest edge, as
 * Python's CLIPImageProcessor reads it. Throws ValidationError MODEL_UNSUPPORTED naming the bad field.
 */
export function parsePreprocessorConfig(json: unknown): ClipPreprocessConfig {
  const result = checkContent(PreprocessorSchema, json);
  if (!result.ok) throw invalidConfig(result.issues.map((issue) => ({ path: issue.path || "(file)", message: issue.message })));
  return normalizeConfig(result.output);
}

function normalizeConfig(c: PreprocessorJson): ClipPreprocessConfig {
  const resize = (c.do_resize ?? c.size !== undefined) ? resizeOf(c.size) : null;
  const crop = c.do_center_crop ? cropOf(c.crop_size) : null;
  const normalize = c.do_normalize ? { mean: channels(c.image_mean, "image_mean"), std: channels(c.image_std, "image_std") } : null;
  const output = crop ?? (resize && "width" in resize ? resize : null);
  if (!output) {
    throw invalidConfig([{ path: "do_center_crop", message: "without a centre crop (crop_size) or a fixed size {height, width}, images would give tensors of different sizes" }]);
  }
  return {
    resize,
    kernel: KERNELS[c.resample] ?? "cubic",
    crop,
    rescaleFactor: c.do_rescale ? c.rescale_factor : 1,
    mean: normalize?.mean ?? [0, 0, 0],
    std: normalize?.std ?? [1, 1, 1],
    width: output.width,
    height: output.height,
  };
}

function resizeOf(size: PreprocessorJson["size"]): ClipPreprocessConfig["resize"] {
  if (size === undefined) throw invalidConfig([{ path: "size", message: "do_resize is true but size is missing" }]);
  if (typeof size === "number") return { shortestEdge: size };
  return "shortest_edge" in size ? { shortestEdge: size.shortest_edge } : { width: size.width, height: size.height };
}

function cropOf(size: PreprocessorJson["crop_size"]): { width: number; height: number } {
  if (size === undefined) throw invalidConfig([{ path: "crop_size", message: "do_center_crop is true but crop_size is missing" }]);
  return typeof size === "number" ? { width: size, height: size } : { width: size.width, height: size.height };
}

function channels(value: number | readonly number[] | undefined, field: string): [number, number, number] {
  if (value === undefined) throw invalidConfig([{ path: field, message: "do_normalize is true but it is missing" }]);
  return typeof value === "number" ? [value, value, value] : [value[0] as number, value[1] as number, value[2] as number];
}

function invalidConfig(issues: { path: string; message: string }[]): ValidationError {
  const first = issues[0] as { path: string; message: string };
  return new ValidationError("MODEL_UNSUPPORTED", `Unsupported preprocessor_config.json: ${first.path}: ${first.message}`, {
    issues,
    hint: "semsearch reads CLIP-style image preprocessing: resize, centre crop, rescale and normalize.",
  });
}
