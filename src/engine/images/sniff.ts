/**
 * Which image formats semsearch reads, and what a file is when the decoder cannot say: its magic
 * numbers, or the text it starts with. Pure.
 */

/** The formats semsearch decodes (sharp's prebuilt libvips reads them all). */
export const IMAGE_FORMATS = ["jpeg", "png", "webp", "gif", "tiff", "avif"] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

const LABELS: Record<ImageFormat, string> = { jpeg: "JPEG", png: "PNG", webp: "WebP", gif: "GIF", tiff: "TIFF", avif: "AVIF" };

/** How a person names a readable format (`JPEG`, `WebP`); null for any other format. */
export function formatLabel(format: string): string | null {
  return (IMAGE_FORMATS as readonly string[]).includes(format) ? LABELS[format as ImageFormat] : null;
}

/**
 * A format named by sharp's header reader, as semsearch names it: HEIF holding AV1 is `avif`,
 * holding HEVC `heic` (no HEVC decoder ships with sharp). Others keep sharp's name (`svg`, `jp2k`).
 */
export function headerFormat(format: string, compression: string | undefined): string {
  if (format !== "heif") return format;
  return compression === "av1" ? "avif" : compression === "hevc" ? "heic" : "heif";
}

/** ISO-BMFF brands of still images (the `ftyp` box's major and compatible brands). */
const AVIF_BRANDS = new Set(["avif", "avis"]);
const HEIC_BRANDS = new Set(["heic", "heix", "heim", "heis", "hevc", "hevx"]);
const HEIF_BRANDS = new Set(["mif1", "msf1"]);

/** `avif`, `heic` or `heif` from an ISO-BMFF `ftyp` box's brands (an AV1 brand anywhere wins); null for others (video, …). */
function isobmffImage(bytes: Uint8Array): string | null {
  const boxSize = ((bytes[0] as number) << 24 >>> 0) + ((bytes[1] as number) << 16) + ((bytes[2] as number) << 8) + (bytes[3] as number);
  const end = Math.min(bytes.length, boxSize >= 16 ? boxSize : 16, 4096);
  const brands = [ascii(bytes, 8, 12)];
  for (let offset = 16; offset + 4 <= end; offset += 4) brands.push(ascii(bytes, offset, offset + 4));
  if (brands.some((brand) => AVIF_BRANDS.has(brand))) return "avif";
  if (brands.some((brand) => HEIC_BRANDS.has(brand))) return "heic";
  return brands.some((brand) => HEIF_BRANDS.has(brand)) ? "heif" : null;
}

const SIGNATURES: [format: string, offset: number, magic: string | number[]][] = [
  ["jpeg", 0, [0xff, 0xd8, 0xff]],
  ["png", 0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
  ["gif", 0, "GIF87a"],
  ["gif", 0, "GIF89a"],
  ["tiff", 0, "II*\0"],
  ["tiff", 0, "MM\0*"],
  ["jxl", 0, [0xff, 0x0a]],
  ["jxl", 0, [0, 0, 0, 0x0c, 0x4a, 0x58, 0x4c, 0x20, 0x0d, 0x0a, 0x87, 0x0a]],
  ["jp2k", 0, [0, 0, 0, 0x0c, 0x6a, 0x50, 0x20, 0x20, 0x0d, 0x0a, 0x87, 0x0a]],
  ["psd", 0, "8BPS"],
  ["ico", 0, [0, 0, 1, 0]],
  ["pdf", 0, "%PDF-"],
];

function matches(bytes: Uint8Array, offset: number, magic: string | number[]): boolean {
  const expected = typeof magic === "string" ? [...magic].map((ch) => ch.charCodeAt(0)) : magic;
  return bytes.length >= offset + expected.length && expected.every((byte, i) => bytes[offset + i] === byte);
}

function ascii(bytes: Uint8Array, start: number, end: number): string {
  return String.fromCharCode(...bytes.subarray(start, end));
}

/** The image format a file's first bytes announce, or null when they announce none. */
export function sniffFormat(bytes: Uint8Array): string | null {
  for (const [format, offset, magic] of SIGNATURES) if (matches(bytes, offset, magic)) return format;
  if (matches(bytes, 0, "RIFF") && matches(bytes, 8, "WEBP")) return "webp";
  if (bytes.length >= 12 && matches(bytes, 4, "ftyp")) return isobmffImage(bytes);
  // BMP: "BM" alone is too weak a sign; the DIB header's size (BITMAPCOREHEADER … BITMAPV5HEADER) must be one of the known.
  if (bytes.length >= 18 && matches(bytes, 0, "BM")) {
    const dib = ((bytes[14] as number) | ((bytes[15] as number) << 8) | ((bytes[16] as number) << 16) | ((bytes[17] as number) << 24)) >>> 0;
    return [12, 16, 40, 52, 56, 64, 108, 124].includes(dib) ? "bmp" : null;
  }
  return null;
}

/**
 * `not an image (starts with "<!DOCTYPE html>")`: the file's first printable characters (up to 16,
 * after leading white space) when there are a few, else `not an image (unknown format)`.
 */
export function describeNonImage(bytes: Uint8Array): string {
  let i = 0;
  while (i < bytes.length && [0x09, 0x0a, 0x0d, 0x20].includes(bytes[i] as number)) i++;
  let end = i;
  while (end < bytes.length && end - i < 16 && (bytes[end] as number) >= 0x20 && (bytes[end] as number) <= 0x7e) end++;
  const text = ascii(bytes, i, end).trimEnd();
  return text.length >= 4 ? `not an image (starts with ${JSON.stringify(text)})` : "not an image (unknown format)";
}
