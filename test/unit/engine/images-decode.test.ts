/**
 * Image decoding (engine/images/decode.ts) against transformers.js's own CLIPImageProcessor on the
 * fixture images and real photos; hostile bytes; formats, colour spaces, alpha, animation and EXIF
 * orientation; the pixel limit; and reading preprocessor_config.json.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";
import { AutoProcessor, CLIPVisionModelWithProjection, env, RawImage, Tensor } from "@huggingface/transformers";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/engine/errors.js";
import { cropWindow, ImageDecodeError, MAX_IMAGE_PIXELS, parsePreprocessorConfig, preprocessImage, resizedSize, type ClipPreprocessConfig } from "../../../src/engine/images/decode.js";
import { pilResize } from "../../helpers/pil-resample.js";
import { tempDir } from "../../helpers/temp.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const TINY_CLIP = path.join(ROOT, "fixtures/models/tiny-clip");
const FIXTURES = readdirSync(path.join(ROOT, "fixtures/images"))
  .filter((name) => /\.(png|jpg|webp|gif)$/.test(name))
  .map((name) => path.join(ROOT, "fixtures/images", name));
/** The evaluation photos (51 COCO JPEGs), read where they are, beside the repository as `npm run eval` finds them; skipped when absent. */
const COCO = path.resolve(ROOT, "..", "shared", "eval", "coco-mini-cc");
const PHOTOS = existsSync(COCO) ? ["train2017", "val2017"].flatMap((dir) => readdirSync(path.join(COCO, dir)).filter((name) => name.endsWith(".jpg")).map((name) => path.join(COCO, dir, name))) : [];

const CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073];
const CLIP_STD = [0.26862954, 0.26130258, 0.27577711];
/** Xenova/clip-vit-base-patch32's preprocessor_config.json (openai/clip-vit-base-patch32's, in the current format). */
const CLIP_B32 = { crop_size: { height: 224, width: 224 }, do_center_crop: true, do_convert_rgb: true, do_normalize: true, do_rescale: true, do_resize: true, feature_extractor_type: "CLIPFeatureExtractor", image_mean: CLIP_MEAN, image_processor_type: "CLIPImageProcessor", image_std: CLIP_STD, resample: 3, rescale_factor: 0.00392156862745098, size: { shortest_edge: 224 } };
/** Xenova/siglip-base-patch16-224's: a fixed size, no crop. */
const SIGLIP = { do_normalize: true, do_rescale: true, do_resize: true, image_mean: [0.5, 0.5, 0.5], image_processor_type: "SiglipImageProcessor", image_std: [0.5, 0.5, 0.5], processor_class: "SiglipProcessor", resample: 3, rescale_factor: 0.00392156862745098, size: { height: 224, width: 224 } };
/** A fixed size smaller than the crop: the crop pads with black all round. */
const PADDED = { ...CLIP_B32, size: { height: 20, width: 25 }, crop_size: { height: 32, width: 32 } };
/** No resize: the crop is cut from the decoded image as it is. */
const CROP_ONLY = { ...CLIP_B32, do_resize: false, crop_size: 32 };

type Processor = (image: RawImage) => Promise<{ pixel_values: Tensor }>;
const processors = new Map<string, Processor>();
const configs = new Map<string, ClipPreprocessConfig>();
let tmp = "";

/** Loads transformers.js's processor from a model folder, as a model's user would. */
async function load(name: string, json: object | null): Promise<void> {
  const dir = json ? path.join(tmp, name) : TINY_CLIP;
  if (json) {
    mkdirSync(dir);
    writeFileSync(path.join(dir, "preprocessor_config.json"), JSON.stringify(json));
  }
  processors.set(name, (await AutoProcessor.from_pretrained(dir)) as unknown as Processor);
  configs.set(name, parsePreprocessorConfig(JSON.parse(readFileSync(path.join(dir, "preprocessor_config.json"), "utf8"))));
}

beforeAll(async () => {
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  tmp = tempDir("semsearch-images-decode-");
  await load("tiny", null);
  for (const [name, json] of Object.entries({ b32: CLIP_B32, siglip: SIGLIP, padded: PADDED, cropOnly: CROP_ONLY })) await load(name, json);
});

/** transformers.js's pixel values for a file. */
async function reference(name: string, file: string): Promise<Float32Array> {
  const { pixel_values } = await (processors.get(name) as Processor)(await RawImage.read(file));
  const config = configs.get(name) as ClipPreprocessConfig;
  expect(pixel_values.dims).toEqual([1, 3, config.height, config.width]);
  return pixel_values.data as Float32Array;
}

async function ours(name: string, file: string): Promise<Float32Array> {
  return preprocessImage(readFileSync(file), configs.get(name) as ClipPreprocessConfig);
}

function meanAbsDiff(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs((a[i] as number) - (b[i] as number));
  return sum / a.length;
}

const short = (file: string) => path.basename(file);

describe("matches transformers.js's CLIPImageProcessor", () => {
  // transformers.js resizes with sharp's affine transform, which point-samples on a downscale and
  // pads black at the far edges on an upscale; sharp's resize averages as Pillow does. On the
  // fixtures at tiny-clip's 32 px the two agree closely (measured: mean 0.0024, worst 0.021,
  // red-blue.webp); on the photos at 224 px they differ by the aliasing (mean 0.093, worst 0.27).
  // Differences are in normalised units: one 8-bit level is 1 / (255 × std) ≈ 0.015.
  it.each(FIXTURES.map((f) => [short(f), f]))("%s, tiny-clip's 32 px", async (_, file) => {
    expect(meanAbsDiff(await ours("tiny", file), await reference("tiny", file))).toBeLessThan(0.04);
  });

  it.skipIf(PHOTOS.length === 0)("the photos, CLIP ViT-B/32's 224 px", async () => {
    const diffs = [];
    for (const file of PHOTOS) diffs.push(meanAbsDiff(await ours("b32", file), await reference("b32", file)));
    expect(Math.max(...diffs)).toBeLessThan(0.35);
    expect(diffs.reduce((a, b) => a + b) / diffs.length).toBeLessThan(0.12);
  });
});

describe("matches transformers.js's CLIPImageProcessor with Pillow's resampling", () => {
  // With Pillow's resampling in place of transformers.js's, only libvips's shortcuts remain (shrink
  // on load, 8-bit steps). Measured mean / worst: fixtures 0.0008 / 0.025 (32 px), 0.0011 / 0.0083
  // (224 px); photos 0.0024 / 0.0029 (224 px), 0.043 / 0.13 (32 px: a 20× downscale, JPEG shrink on load).
  let original: RawImage["resize"];
  beforeAll(() => {
    original = RawImage.prototype.resize;
    RawImage.prototype.resize = async function (this: RawImage, width: number, height: number, { resample = 2 }: { resample?: number | string } = {}) {
      if (this.width === width && this.height === height) return this;
      return new RawImage(pilResize(this.data, this.width, this.height, this.channels, width, height, Number(resample)), width, height, this.channels as 1 | 2 | 3 | 4);
    };
  });
  afterAll(() => {
    RawImage.prototype.resize = original;
  });

  it.each(["tiny", "b32", "siglip", "padded", "cropOnly"])("the fixtures, %s", async (name) => {
    for (const file of FIXTURES) expect(meanAbsDiff(await ours(name, file), await reference(name, file)), short(file)).toBeLessThan(0.03);
  });

  it.skipIf(PHOTOS.length === 0).each([
    ["b32", 0.008, 0.004],
    ["siglip", 0.008, 0.004],
    ["tiny", 0.2, 0.06],
  ])("the photos, %s (worst < %s, mean < %s)", async (name, worst, mean) => {
    const diffs: number[] = [];
    for (const file of PHOTOS) diffs.push(meanAbsDiff(await ours(name, file), await reference(name, file)));
    expect(Math.max(...diffs)).toBeLessThan(worst);
    expect(diffs.reduce((a, b) => a + b) / diffs.length).toBeLessThan(mean);
  });

  it.skipIf(PHOTOS.length === 0)("would notice a crop one pixel off", async () => {
    const file = PHOTOS[0] as string;
    const want = await reference("b32", file);
    const got = await ours("b32", file);
    const shifted = new Float32Array(got.length);
    for (let i = 0; i < got.length; i++) shifted[i] = got[i % 224 === 223 ? i : i + 1] as number;
    expect(meanAbsDiff(shifted, want)).toBeGreaterThan(4 * meanAbsDiff(got, want));
    expect(meanAbsDiff(shifted, want)).toBeGreaterThan(0.008);
  });
});

it("gives the tiny CLIP the image vectors transformers.js's processor does", async () => {
  const model = await CLIPVisionModelWithProjection.from_pretrained(TINY_CLIP, { dtype: "fp32" });
  const config = configs.get("tiny") as ClipPreprocessConfig;
  const embed = async (pixels: Float32Array) => {
    const { image_embeds } = (await model({ pixel_values: new Tensor("float32", pixels, [1, 3, config.height, config.width]) })) as { image_embeds: Tensor };
    const v = Array.from(image_embeds.data as Float32Array);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  };
  for (const file of FIXTURES) {
    const [a, b] = [await embed(await ours("tiny", file)), await embed(await reference("tiny", file))];
    expect(a.reduce((sum, x, i) => sum + x * (b[i] as number), 0), short(file)).toBeGreaterThan(0.999);
  }
  await model.dispose();
});

/** The 0–255 colour at (x, y) of a CHW output, un-normalised. */
function colourAt(chw: Float32Array, config: ClipPreprocessConfig, x: number, y: number): number[] {
  const plane = config.width * config.height;
  return [0, 1, 2].map((c) => Math.round(((chw[c * plane + y * config.width + x] as number) * (config.std[c] as number) + (config.mean[c] as number)) / config.rescaleFactor));
}

function expectColour(actual: number[], expected: number[], tolerance: number): void {
  actual.forEach((value, c) => expect(Math.abs(value - (expected[c] as number)), `channel ${c} of [${actual.join(", ")}] vs [${expected.join(", ")}]`).toBeLessThanOrEqual(tolerance));
}

/** A sharp image from a function of the pixel position (`channels` values 0–255). */
function drawn(width: number, height: number, channels: 3 | 4, pixel: (x: number, y: number) => number[], pageHeight?: number) {
  const data = Buffer.alloc(width * height * channels);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data.set(pixel(x, y), (y * width + x) * channels);
  return sharp(data, { raw: { width, height, channels, pageHeight } });
}

const RED = [255, 0, 0];
const BLUE = [0, 0, 255];
const tinyConfig = () => configs.get("tiny") as ClipPreprocessConfig;

describe("formats and colour", () => {
  /** Writes the image to the temporary folder and reads it back, as a file on disk would be. */
  async function written(name: string, image: ReturnType<typeof sharp>): Promise<Buffer> {
    const file = path.join(tmp, name);
    await image.toFile(file);
    return readFileSync(file);
  }

  it.each([
    ["AVIF", (img: ReturnType<typeof sharp>) => img.avif({ quality: 90 }), { format: "heif", compression: "av1" }, 10],
    ["TIFF", (img: ReturnType<typeof sharp>) => img.tiff({ compression: "lzw" }), { format: "tiff" }, 0],
    ["WebP", (img: ReturnType<typeof sharp>) => img.webp({ lossless: true }), { format: "webp" }, 0],
  ] as const)("reads %s", async (name, encode, header, tolerance) => {
    const bytes = await written(`solid.${name.toLowerCase()}`, encode(drawn(64, 48, 3, () => [200, 60, 30])));
    expect(await sharp(bytes).metadata()).toMatchObject(header);
    expectColour(colourAt(await preprocessImage(bytes, tinyConfig()), tinyConfig(), 16, 16), [200, 60, 30], tolerance);
  });

  it("reads a greyscale PNG as three equal channels", async () => {
    const bytes = await written("grey.png", drawn(40, 40, 3, () => [100, 100, 100]).toColourspace("b-w").png());
    expect((await sharp(bytes).metadata()).channels).toBe(1);
    expectColour(colourAt(await preprocessImage(bytes, tinyConfig()), tinyConfig(), 5, 5), [100, 100, 100], 0);
  });

  it("reads a 16-bit PNG as 8-bit", async () => {
    const bytes = await written("deep.png", drawn(40, 40, 3, () => [255, 128, 0]).toColourspace("rgb16").png());
    expect((await sharp(bytes).metadata()).depth).toBe("ushort");
    expectColour(colourAt(await preprocessImage(bytes, tinyConfig()), tinyConfig(), 5, 5), [255, 128, 0], 1);
  });

  it("converts a CMYK JPEG to sRGB", async () => {
    const bytes = await written("cmyk.jpg", drawn(40, 40, 3, () => RED).toColourspace("cmyk").jpeg({ quality: 95 }));
    expect((await sharp(bytes).metadata()).space).toBe("cmyk");
    const [r, g, b] = colourAt(await preprocessImage(bytes, tinyConfig()), tinyConfig(), 5, 5) as [number, number, number];
    expect(r).toBeGreaterThan(200);
    expect(Math.max(g, b)).toBeLessThan(50);
  });

  it.each([
    ["half-transparent red", [255, 0, 0, 128], [255, 127, 127]],
    ["fully transparent black", [0, 0, 0, 0], [255, 255, 255]],
  ])("flattens %s onto white", async (name, rgba, expected) => {
    const bytes = await written(`alpha-${rgba.join("-")}.png`, drawn(40, 40, 4, () => rgba).png());
    expect((await sharp(bytes).metadata()).hasAlpha).toBe(true);
    expectColour(colourAt(await preprocessImage(bytes, tinyConfig()), tinyConfig(), 0, 0), expected, 1);
  });

  it("takes the first frame of an animated GIF", async () => {
    const bytes = await written("red-then-blue.gif", drawn(32, 64, 3, (_, y) => (y < 32 ? RED : BLUE), 32).gif());
    expect((await sharp(bytes).metadata()).pages).toBe(2);
    const pixels = await preprocessImage(bytes, tinyConfig());
    for (const [x, y] of [[0, 0], [16, 16], [31, 31]] as const) expectColour(colourAt(pixels, tinyConfig(), x, y), RED, 0);
  });

  it.each(["tiny", "cropOnly"])("turns a JPEG as its EXIF orientation says (6: a quarter clockwise), %s", async (name) => {
    // Stored 96 × 48 with the left half red; shown 48 × 96 with red on top.
    const bytes = await written("orientation-6.jpg", drawn(96, 48, 3, (x) => (x < 48 ? RED : BLUE)).jpeg({ quality: 95 }).withMetadata({ orientation: 6 }));
    expect((await sharp(bytes).metadata()).orientation).toBe(6);
    const config = configs.get(name) as ClipPreprocessConfig;
    const pixels = await preprocessImage(bytes, config);
    for (const x of [2, 16, 29]) {
      expectColour(colourAt(pixels, config, x, 2), RED, 8);
      expectColour(colourAt(pixels, config, x, 29), BLUE, 8);
    }
  });
});

/** A PNG chunk with its CRC. */
function chunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const frame = Buffer.alloc(8 + data.length + 4);
  frame.writeUInt32BE(data.length, 0);
  body.copy(frame, 4);
  frame.writeUInt32BE(zlib.crc32(body), 8 + data.length);
  return frame;
}

/** A PNG whose header says `width` × `height` 8-bit RGB, with a few bytes of image data. */
function pngClaiming(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", header), chunk("IDAT", zlib.deflateSync(Buffer.alloc(64))), chunk("IEND", Buffer.alloc(0))]);
}

function randomBytes(length: number, seed: number): Buffer {
  const bytes = Buffer.alloc(length);
  let state = seed;
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    bytes[i] = state >>> 24;
  }
  return bytes;
}

/** A 2 × 2 24-bit BMP (a format sharp's libvips does not read). */
function bmp(): Buffer {
  const file = Buffer.alloc(54 + 16);
  file.write("BM", 0, "latin1");
  file.writeUInt32LE(file.length, 2);
  file.writeUInt32LE(54, 10);
  file.writeUInt32LE(40, 14);
  file.writeInt32LE(2, 18);
  file.writeInt32LE(2, 22);
  file.writeUInt16LE(1, 26);
  file.writeUInt16LE(24, 28);
  file.writeUInt32LE(16, 34);
  return file;
}

async function refusal(bytes: Uint8Array, options?: { maxPixels?: number }, config = tinyConfig()): Promise<string> {
  const error = await preprocessImage(bytes, config, options).then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(ImageDecodeError);
  const reason = (error as ImageDecodeError).reason;
  expect(reason.length).toBeLessThan(120);
  return reason;
}

describe("hostile input: a clean ImageDecodeError, never a crash or a hang", () => {
  const fixture = (name: string) => readFileSync(path.join(ROOT, "fixtures/images", name));
  const withBadCrc = () => {
    const png = Buffer.from(fixture("red.png"));
    const at = png.length - 13; // the last byte of the IDAT chunk's CRC
    png.writeUInt8(png.readUInt8(at) ^ 0xff, at);
    return png;
  };

  it.each<[string, () => Uint8Array | Promise<Uint8Array>, string | RegExp]>([
    ["zero bytes", () => new Uint8Array(0), "empty file"],
    ["a text file", () => Buffer.from("hello, world: this is a plain text file\n"), 'not an image (starts with "hello, world: th")'],
    ["an HTML page", () => Buffer.from('<!DOCTYPE html>\n<html lang="en"><body>Not found</body></html>\n'), 'not an image (starts with "<!DOCTYPE html>")'],
    ["random bytes", () => randomBytes(4096, 7), "not an image (unknown format)"],
    ["the first half of a JPEG", () => fixture("red.jpg").subarray(0, 159), /^truncated or corrupt JPEG \(.+\)$/],
    ["a JPEG cut after its header", async () => (await drawn(256, 256, 3, (x, y) => [x, y, (x * y) & 255]).jpeg().toBuffer()).subarray(0, 3000), /^truncated or corrupt JPEG \(.+\)$/],
    ["a PNG whose header says 50,000 × 50,000", () => pngClaiming(50_000, 50_000), "too large: 50000 × 50000 pixels (limit 100,000,000)"],
    ["a PNG with a bad CRC", withBadCrc, /^truncated or corrupt PNG \(.+\)$/],
    ["a PNG signature alone", () => fixture("red.png").subarray(0, 8), /^truncated or corrupt PNG \(.+\)$/],
    ["a GIF header alone", () => fixture("red.gif").subarray(0, 13), /^truncated or corrupt GIF \(.+\)$/],
    ["an SVG", () => Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8" fill="red"/></svg>'), 'unsupported format "svg"'],
    ["a BMP", bmp, 'unsupported format "bmp"'],
  ])("%s", async (_, bytes, expected) => {
    const started = performance.now();
    const reason = await refusal(await bytes());
    if (typeof expected === "string") expect(reason).toBe(expected);
    else expect(reason).toMatch(expected);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it("crops a 1 × 60,000 image without making its 224 × 13,440,000 resize", async () => {
    const bytes = await drawn(1, 60_000, 3, (_, y) => (y < 30_000 ? RED : BLUE)).png().toBuffer();
    const config = configs.get("b32") as ClipPreprocessConfig;
    const started = performance.now();
    const pixels = await preprocessImage(bytes, config);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(pixels.length).toBe(3 * 224 * 224);
    expectColour(colourAt(pixels, config, 100, 0), RED, 2);
    expectColour(colourAt(pixels, config, 100, 223), BLUE, 2);
  });
});

describe("the pixel limit", () => {
  it("refuses a 3000 × 3000 image over maxPixels 1,000,000, from its header", async () => {
    const bytes = await drawn(3000, 3000, 3, () => RED).png().toBuffer();
    expect(await refusal(bytes, { maxPixels: 1_000_000 })).toBe("too large: 3000 × 3000 pixels (limit 1,000,000)");
    expect((await preprocessImage(bytes, tinyConfig())).length).toBe(3 * 32 * 32);
  });

  it("defaults to 100 million pixels and takes only positive whole numbers", async () => {
    expect(MAX_IMAGE_PIXELS).toBe(100_000_000);
    const bytes = readFileSync(path.join(ROOT, "fixtures/images/red.png"));
    expect(await refusal(pngClaiming(10_001, 10_000))).toBe("too large: 10001 × 10000 pixels (limit 100,000,000)");
    await expect(preprocessImage(bytes, tinyConfig(), { maxPixels: 0 })).rejects.toThrow(RangeError);
    await expect(preprocessImage(bytes, tinyConfig(), { maxPixels: 1.5 })).rejects.toThrow(RangeError);
  });
});

describe("geometry", () => {
  it.each([
    [{ width: 640, height: 427 }, 224, { width: 335, height: 224 }],
    [{ width: 480, height: 640 }, 224, { width: 224, height: 298 }],
    [{ width: 32, height: 32 }, 224, { width: 224, height: 224 }],
    [{ width: 1, height: 60_000 }, 224, { width: 224, height: 13_440_000 }],
    // 224 × 700 / 600 = 261.33…; 224 × 3 / 2.01 = 334.328…: floor after rounding to 2 decimals, as transformers.js.
    [{ width: 700, height: 600 }, 224, { width: 261, height: 224 }],
  ])("resizes %o to shortest edge %d: %o", (size, shortestEdge, expected) => {
    expect(resizedSize(size, { shortestEdge })).toEqual(expected);
  });

  it.each([
    [335, 224, { start: 55, length: 224, before: 0, after: 0 }],
    [224, 224, { start: 0, length: 224, before: 0, after: 0 }],
    [20, 32, { start: 0, length: 20, before: 6, after: 6 }],
    [21, 32, { start: 0, length: 21, before: 5, after: 6 }],
  ])("crops %d px to %d: %o", (size, crop, expected) => {
    expect(cropWindow(size, crop)).toEqual(expected);
  });

  it("pads one side and crops the other (transformers.js fails here: sharp applies its extend before its extract)", async () => {
    const config = parsePreprocessorConfig({ ...CLIP_B32, size: { height: 20, width: 48 }, crop_size: { height: 32, width: 32 } });
    const bytes = await drawn(64, 64, 3, (x) => (x < 32 ? RED : BLUE)).png().toBuffer();
    const pixels = await preprocessImage(bytes, config);
    for (const y of [0, 5, 26, 31]) expectColour(colourAt(pixels, config, 3, y), [0, 0, 0], 0);
    for (const y of [6, 15, 25]) {
      expectColour(colourAt(pixels, config, 3, y), RED, 0);
      expectColour(colourAt(pixels, config, 28, y), BLUE, 0);
    }
  });
});

describe("parsePreprocessorConfig", () => {
  const clipFields = { mean: CLIP_MEAN, std: CLIP_STD, rescaleFactor: 0.00392156862745098 };

  it.each([
    ["CLIP ViT-B/32", CLIP_B32, { resize: { shortestEdge: 224 }, kernel: "cubic", crop: { width: 224, height: 224 }, ...clipFields, width: 224, height: 224 }],
    ["SigLIP", SIGLIP, { resize: { width: 224, height: 224 }, kernel: "cubic", crop: null, mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5], rescaleFactor: 0.00392156862745098, width: 224, height: 224 }],
    ["numbers for sizes (the older format)", { ...CLIP_B32, size: 336, crop_size: 336 }, { resize: { shortestEdge: 336 }, kernel: "cubic", crop: { width: 336, height: 336 }, ...clipFields, width: 336, height: 336 }],
    ["transformers.js's defaults", { size: { height: 32, width: 48 } }, { resize: { width: 48, height: 32 }, kernel: "linear", crop: null, mean: [0, 0, 0], std: [1, 1, 1], rescaleFactor: 1 / 255, width: 48, height: 32 }],
    ["no rescale, one mean and std for all channels", { ...SIGLIP, do_rescale: false, image_mean: 127.5, image_std: 127.5, resample: 1 }, { resize: { width: 224, height: 224 }, kernel: "lanczos3", crop: null, mean: [127.5, 127.5, 127.5], std: [127.5, 127.5, 127.5], rescaleFactor: 1, width: 224, height: 224 }],
    ["a crop without a resize", CROP_ONLY, { resize: null, kernel: "cubic", crop: { width: 32, height: 32 }, ...clipFields, width: 32, height: 32 }],
  ])("reads %s", (_, json, expected) => {
    expect(parsePreprocessorConfig(json)).toEqual(expected);
  });

  it.each<[string, unknown, string]>([
    ["not an object", null, "(file)"],
    ["a size of another form", { ...CLIP_B32, size: { longest_edge: 224 } }, "size"],
    ["a size of 0", { ...CLIP_B32, size: 0 }, "size"],
    ["an unknown resample filter", { ...CLIP_B32, resample: 7 }, "resample"],
    ["two means", { ...CLIP_B32, image_mean: [0.5, 0.5] }, "image_mean"],
    ["a std of 0", { ...CLIP_B32, image_std: [0.5, 0, 0.5] }, "image_std"],
    ["a rescale factor that is text", { ...CLIP_B32, rescale_factor: "1/255" }, "rescale_factor"],
    ["padding", { ...CLIP_B32, do_pad: true }, "do_pad"],
    ["a shortest edge without a crop", { ...CLIP_B32, do_center_crop: false }, "do_center_crop"],
    ["a crop without crop_size", { ...CLIP_B32, crop_size: undefined }, "crop_size"],
    ["normalisation without image_mean", { ...CLIP_B32, image_mean: undefined }, "image_mean"],
    ["a resize without size", { ...CLIP_B32, size: undefined, do_resize: true }, "size"],
  ])("names the field of %s", (_, json, field) => {
    const error = (() => {
      try {
        parsePreprocessorConfig(json);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).code).toBe("MODEL_UNSUPPORTED");
    expect((error as ValidationError).issues?.[0]?.path).toMatch(new RegExp(`^${field.replace(/[()]/g, "\\$&")}(\\.\\d+)?$`));
    expect((error as ValidationError).message).toContain(`preprocessor_config.json: ${field}`);
  });
});

describe("parsePreprocessorConfig never quotes the file", () => {
  it.each<[string, Record<string, unknown>]>([
    ["do_resize", { do_resize: "SECRET-VALUE" }],
    ["do_center_crop", { do_center_crop: "SECRET-VALUE" }],
    ["rescale_factor", { rescale_factor: "SECRET-VALUE" }],
    ["size", { size: "SECRET-VALUE" }],
    ["size.shortest_edge", { size: { shortest_edge: "SECRET-VALUE" } }],
    ["crop_size", { crop_size: { "SECRET-VALUE": 1 } }],
    ["image_mean", { image_mean: ["SECRET-VALUE", 0, 0] }],
    ["do_pad", { do_pad: "SECRET-VALUE" }],
    ["resample", { resample: "SECRET-VALUE" }],
    ["do_convert_rgb", { do_convert_rgb: "SECRET-VALUE" }],
  ])("a bad %s: names the field and what it must be, never the value found", (_, fields) => {
    let thrown: unknown;
    try {
      parsePreprocessorConfig({ ...CLIP_B32, ...fields });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ValidationError);
    const error = thrown as ValidationError;
    expect(JSON.stringify({ message: error.message, issues: error.issues, hint: error.hint })).not.toContain("SECRET");
    expect(error.message).toMatch(/^Unsupported preprocessor_config\.json: [a-z_]+(\.[a-z_0-9]+)*: (expected|semsearch does not implement)/);
  });

  it("says what is expected in words where the check has none of its own", () => {
    expect(() => parsePreprocessorConfig({ ...CLIP_B32, rescale_factor: 1e400 })).toThrow(/rescale_factor: expected a finite number$/);
    expect(() => parsePreprocessorConfig({ ...CLIP_B32, do_resize: 1 })).toThrow(/do_resize: expected boolean$/);
  });
});

describe("what outside testing found", () => {
  const b32 = () => parsePreprocessorConfig(CLIP_B32);

  it("refuses a strip too elongated to resize, with a reason rather than libvips's message", async () => {
    const strip = await sharp({ create: { width: 1, height: 500_000, channels: 3, background: { r: 9, g: 9, b: 9 } } }).png().toBuffer();
    await expect(preprocessImage(strip, b32())).rejects.toMatchObject({ reason: "too elongated to use: 1 × 500000 pixels" });
  });

  it("quotes what is not an image only when asked (downloads), never a local file's content", async () => {
    const secret = Buffer.from("root:secret-hash:19000:0:99999:7:::\n");
    await expect(preprocessImage(secret, b32())).rejects.toMatchObject({ reason: 'not an image (starts with "root:secret-hash")' });
    await expect(preprocessImage(secret, b32(), { quoteContent: false })).rejects.toMatchObject({ reason: "not an image (unknown format)" });
  });

  it("refuses preprocessing sizes no vision model takes", () => {
    expect(() => parsePreprocessorConfig({ ...CLIP_B32, size: { shortest_edge: 1e9 } })).toThrow(ValidationError);
    expect(() => parsePreprocessorConfig({ ...CLIP_B32, crop_size: { height: 5000, width: 224 } })).toThrow(/crop_size/);
  });
});
