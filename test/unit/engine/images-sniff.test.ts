/** What a file's first bytes say it is (images/sniff.ts): the decoder's reasons for what is not an image. */
import { describe, expect, it } from "vitest";
import { sniffFormat } from "../../../src/engine/images/sniff.js";

const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");

describe("sniffFormat", () => {
  const bytes = (...parts: (string | number[])[]) => new Uint8Array(Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part, "latin1") : Buffer.from(part)))));
  const ftyp = (major: string, ...compatible: string[]) => {
    const size = 16 + compatible.length * 4;
    return bytes([0, 0, 0, size], "ftyp", major, [0, 0, 0, 0], ...compatible);
  };

  it.each([
    ["png", new Uint8Array(PNG), "png"],
    ["jpeg", bytes([0xff, 0xd8, 0xff, 0xe0], "JFIF"), "jpeg"],
    ["gif89a", bytes("GIF89a", [1, 0, 1, 0]), "gif"],
    ["gif87a", bytes("GIF87a"), "gif"],
    ["webp", bytes("RIFF", [0, 0, 0, 0], "WEBPVP8 "), "webp"],
    ["avif", ftyp("avif", "mif1", "miaf"), "avif"],
    ["avif sequence", ftyp("avis"), "avif"],
    ["avif under mif1", ftyp("mif1", "avif"), "avif"],
    ["heic", ftyp("heic", "mif1"), "heic"],
    ["heif", ftyp("mif1", "miaf"), "heif"],
    ["mp4", ftyp("isom", "mp41"), null],
    ["tiff little-endian", bytes("II*\0", [8, 0, 0, 0]), "tiff"],
    ["tiff big-endian", bytes("MM\0*", [0, 0, 0, 8]), "tiff"],
    ["bmp", bytes("BM", Array(12).fill(0), [40, 0, 0, 0]), "bmp"],
    ["BM text", bytes("BMW owners club newsletter"), null],
    ["html", bytes("<!doctype html>"), null],
    ["riff wave", bytes("RIFF", [0, 0, 0, 0], "WAVEfmt "), null],
    ["empty", new Uint8Array(0), null],
    ["jpeg cut short", new Uint8Array([0xff, 0xd8]), null],
  ])("%s", (_name, input, expected) => {
    expect(sniffFormat(input)).toBe(expected);
  });
});
