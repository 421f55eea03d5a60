/**
 * Image bytes → a CLIP vision model's `pixel_values` row. The only importer of sharp in
 * semsearch's own code, and only lazily, so text-only paths never load libvips.
 *
 * The geometry is transformers.js's ImageProcessor (CLIPImageProcessor): the shorter side resized
 * to `shortest_edge` (the longer side `floor` of its exact length to 2 decimals) or the image to
 * exactly `height` × `width`, then a centre crop at `floor((size − crop) / 2)`, padded with black
 * where the image is smaller. Where this deliberately differs from transformers.js:
 *
 * - Resampling: sharp's `resize` with the kernel closest to the config's PIL filter, from the full
 *   decode (shrink-on-load for JPEG). transformers.js samples with `affine`, which does not average
 *   over the pixels a downscale drops (aliasing); PIL and libvips do, so this is nearer to the
 *   Python processors the models were trained with. Vectors match transformers.js's up to that.
 * - Alpha is flattened onto white, the way a person sees a transparent logo on a page (as vLLM's
 *   `rgba_to_rgb` and IDEFICS's `convert_to_rgb` do). transformers.js and PIL's `convert("RGB")`
 *   drop the alpha and keep whatever colour hides under transparent pixels, usually black.
 * - The output always has 3 channels: greyscale, CMYK and 16-bit images become 8-bit sRGB.
 * - EXIF orientation is applied before anything else, as in transformers.js (`rotate()`).
 */
import { InternalError } from "../errors.js";
import type { ClipPreprocessConfig } from "./preprocess-config.js";
import { describeNonImage, formatLabel, headerFormat, sniffFormat } from "./sniff.js";

export { parsePreprocessorConfig, type ClipPreprocessConfig, type ResizeKernel } from "./preprocess-config.js";

/** The most pixels (width × height) an image may have; larger ones are refused before decoding. */
export const MAX_IMAGE_PIXELS = 100_000_000;

/** The longest side libvips resizes to (before the centre crop, which is lazy: a 1 × 60,000 strip costs little). */
const MAX_RESIZED_SIDE = 100_000_000;

export interface PreprocessOptions {
  /** Refuse images with more pixels than this (read from the header, before decoding). Default MAX_IMAGE_PIXELS. */
  maxPixels?: number;
  /**
   * Whether a reason may quote the first bytes of what is not an image (`starts with "<!DOCTYPE"`):
   * yes for a download, not for a local file, whose content is not the reader's to show. Default true.
   */
  quoteContent?: boolean;
}

/** An image that cannot be used. `reason` is short and human, for `image "<ref>": <reason>`. */
export class ImageDecodeError extends Error {
  readonly reason: string;

  constructor(reason: string, options?: { cause?: unknown }) {
    super(reason, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ImageDecodeError";
    this.reason = reason;
  }
}

type Sharp = typeof import("sharp").default;
type SharpMetadata = Awaited<ReturnType<ReturnType<Sharp>["metadata"]>>;

/**
 * Decodes, orients, flattens, resizes, crops and normalises one image into CHW float32 values
 * (`3 × config.height × config.width`), ready to be one row of `pixel_values`. Throws
 * ImageDecodeError for anything that is not a usable image, before decoding when the header says so.
 */
export async function preprocessImage(bytes: Uint8Array, config: ClipPreprocessConfig, options: PreprocessOptions = {}): Promise<Float32Array> {
  const maxPixels = options.maxPixels ?? MAX_IMAGE_PIXELS;
  if (!Number.isSafeInteger(maxPixels) || maxPixels < 1) throw new RangeError(`maxPixels must be a positive whole number, got ${maxPixels}`);
  if (bytes.length === 0) throw new ImageDecodeError("empty file");
  const { default: sharp } = await import("sharp");
  const { meta, label } = await checkedHeader(sharp, bytes, maxPixels, options.quoteContent !== false);
  return toChw(await decodeRgb(sharp, bytes, meta, config, maxPixels, label), config);
}

/** The header of an image semsearch can decode (a known format, at most `maxPixels`), with its format's label. */
async function checkedHeader(sharp: Sharp, bytes: Uint8Array, maxPixels: number, quote = true): Promise<{ meta: SharpMetadata; label: string }> {
  const meta = await readHeader(sharp, bytes, quote);
  const format = headerFormat(meta.format, meta.compression);
  const label = formatLabel(format);
  if (label === null) throw new ImageDecodeError(`unsupported format ${JSON.stringify(format)}`);
  if (meta.width * meta.height > maxPixels) {
    throw new ImageDecodeError(`too large: ${meta.width} × ${meta.height} pixels (limit ${maxPixels.toLocaleString("en-US")})`);
  }
  return { meta, label };
}

/** The header only (format, size, orientation): no pixel is decoded, so any size is safe to read. */
async function readHeader(sharp: Sharp, bytes: Uint8Array, quote: boolean): Promise<SharpMetadata> {
  try {
    return await sharp(bytes, { limitInputPixels: false, failOn: "error", animated: false }).metadata();
  } catch (error) {
    const sniffed = sniffFormat(bytes);
    if (sniffed === null) throw new ImageDecodeError(quote ? describeNonImage(bytes) : "not an image (unknown format)", { cause: error });
    const label = formatLabel(sniffed);
    throw new ImageDecodeError(label ? corrupt(label, error) : `unsupported format ${JSON.stringify(sniffed)}`, { cause: error });
  }
}

/** Decoded RGB bytes (HWC), and where they sit in the output: a centre crop pads them with black where the image is smaller. */
interface Decoded {
  rgb: Buffer;
  width: number;
  height: number;
  left: number;
  top: number;
}

async function decodeRgb(sharp: Sharp, bytes: Uint8Array, meta: SharpMetadata, config: ClipPreprocessConfig, maxPixels: number, label: string): Promise<Decoded> {
  let image = sharp(bytes, { limitInputPixels: maxPixels, failOn: "error", animated: false, sequentialRead: true })
    .rotate()
    .flatten({ background: { r: 255, g: 255, b: 255 } })
    .toColourspace("srgb");
  // The size as displayed: EXIF orientations 5–8 turn the image a quarter.
  let size = { width: meta.autoOrient.width, height: meta.autoOrient.height };
  if (config.resize) {
    const original = size;
    size = resizedSize(size, config.resize);
    // A strip thousands of times longer than wide would be resized to more pixels than libvips takes.
    if (Math.max(size.width, size.height) > MAX_RESIZED_SIDE || Math.min(size.width, size.height) < 1) {
      throw new ImageDecodeError(`too elongated to use: ${original.width} × ${original.height} pixels`);
    }
    image = image.resize(size.width, size.height, { fit: "fill", kernel: config.kernel });
  }
  let [left, top] = [0, 0];
  if (config.crop) {
    // After a resize libvips computes lazily, so only the cropped window of a huge resize is made.
    // The padding is added in toChw: sharp orders extend and extract differently with and without a resize.
    const x = cropWindow(size.width, config.crop.width);
    const y = cropWindow(size.height, config.crop.height);
    image = image.extract({ left: x.start, top: y.start, width: x.length, height: y.length });
    [left, top] = [x.before, y.before];
  }
  const { data, info } = await image
    .removeAlpha()
    .raw({ depth: "uchar" })
    .toBuffer({ resolveWithObject: true })
    .catch((error: unknown) => {
      throw new ImageDecodeError(corrupt(label, error), { cause: error });
    });
  if (info.channels !== 3 || left + info.width > config.width || top + info.height > config.height) {
    throw new InternalError("INTERNAL", `An image decoded to ${info.width} × ${info.height} × ${info.channels} at (${left}, ${top}), outside ${config.width} × ${config.height} × 3`);
  }
  return { rgb: data, width: info.width, height: info.height, left, top };
}

/** transformers.js's output size: the longer side is `floor` of its exact length rounded to 2 decimals. */
export function resizedSize(size: { width: number; height: number }, resize: NonNullable<ClipPreprocessConfig["resize"]>): { width: number; height: number } {
  if (!("shortestEdge" in resize)) return { width: resize.width, height: resize.height };
  const factor = Math.max(resize.shortestEdge / size.width, resize.shortestEdge / size.height);
  return { width: Math.floor(Number((size.width * factor).toFixed(2))), height: Math.floor(Number((size.height * factor).toFixed(2))) };
}

/** One axis of a centre crop: the kept span of the image and the black padding on either side. */
export function cropWindow(size: number, crop: number): { start: number; length: number; before: number; after: number } {
  const offset = (size - crop) / 2;
  if (offset >= 0) return { start: Math.floor(offset), length: crop, before: 0, after: 0 };
  const before = Math.floor(-offset);
  return { start: 0, length: size, before, after: crop - size - before };
}

/**
 * HWC RGB bytes → CHW `(v × rescaleFactor − mean[c]) / std[c]`, in float32 steps as transformers.js
 * computes it; padding is black (v = 0).
 */
function toChw({ rgb, width, height, left, top }: Decoded, config: ClipPreprocessConfig): Float32Array {
  const plane = config.width * config.height;
  const out = new Float32Array(3 * plane);
  for (let c = 0; c < 3; c++) {
    const [mean, std] = [config.mean[c] as number, config.std[c] as number];
    const channel = out.subarray(c * plane, (c + 1) * plane);
    if (width !== config.width || height !== config.height) channel.fill(-mean / std);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const v = Math.fround((rgb[(y * width + x) * 3 + c] as number) * config.rescaleFactor);
        channel[(top + y) * config.width + left + x] = (v - mean) / std;
      }
    }
  }
  return out;
}

/** `truncated or corrupt JPEG (<the decoder's first line, cut short>)`. */
function corrupt(label: string, error: unknown): string {
  const line = (error instanceof Error ? error.message : String(error)).split("\n")[0]?.trim().replace(/:$/, "") ?? "";
  const detail = line.length > 90 ? `${line.slice(0, 89)}…` : line;
  return detail ? `truncated or corrupt ${label} (${detail})` : `truncated or corrupt ${label}`;
}

/**
 * Sets how many threads libvips uses per image (sharp's concurrency, shared by the whole process)
 * and returns the number in force; without `threads`, only returns it. Its default is the number of
 * cores; with several decoding workers, 1 each avoids oversubscribing them.
 */
export async function setDecodeThreads(threads?: number): Promise<number> {
  const { default: sharp } = await import("sharp");
  return sharp.concurrency(threads);
}

/**
 * A small PNG of an image for a terminal's inline-image protocols: oriented, flattened on white, to
 * fit `size` × `size` pixels. Throws ImageDecodeError for what is not a usable image.
 */
export async function thumbnailPng(bytes: Uint8Array, size: number, options: PreprocessOptions = {}): Promise<Buffer> {
  const maxPixels = options.maxPixels ?? MAX_IMAGE_PIXELS;
  if (bytes.length === 0) throw new ImageDecodeError("empty file");
  const { default: sharp } = await import("sharp");
  const { label } = await checkedHeader(sharp, bytes, maxPixels);
  return sharp(bytes, { limitInputPixels: maxPixels, failOn: "error", animated: false })
    .rotate()
    .flatten({ background: { r: 255, g: 255, b: 255 } })
    .resize(size, size, { fit: "inside", withoutEnlargement: true })
    .png()
    .toBuffer()
    .catch((error: unknown) => {
      throw new ImageDecodeError(corrupt(label, error), { cause: error });
    });
}
