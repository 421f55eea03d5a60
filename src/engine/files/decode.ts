/**
 * A text file's bytes → its text (issue 29): UTF-8 (a byte order mark dropped), or UTF-16 LE or BE
 * when a byte order mark says so. Anything else is refused with the reason and the byte it is at,
 * never guessed: a Latin-1 or Windows-1252 file read as UTF-8 would be mojibake, and replacing
 * the bytes that do not decode with U+FFFD would silently change the text that is searched.
 *
 * A NUL byte in the first 8 KiB marks a binary file (as git and grep decide), even when the bytes
 * happen to be valid UTF-8. Byte offsets in reasons count from 0 (as `xxd -s` and `dd skip=` do);
 * lines from 1. Pure.
 */
import { isUtf8 } from "node:buffer";
import { UnreadableFile } from "./document.js";
import { firstInvalidUtf8 } from "../objects/parse.js";

/** How much of the start of a file is looked at for a NUL byte (git's and grep's heuristic). */
export const BINARY_SNIFF_BYTES = 8192;

const UTF8_BOM = [0xef, 0xbb, 0xbf];
const UTF32LE_BOM = [0xff, 0xfe, 0x00, 0x00];
const UTF32BE_BOM = [0x00, 0x00, 0xfe, 0xff];

const count = (n: number) => n.toLocaleString("en-US");
const hex = (byte: number) => `0x${byte.toString(16).padStart(2, "0")}`;
const startsWith = (bytes: Buffer, prefix: number[]) => prefix.every((byte, i) => bytes[i] === byte);

/** The text of a file's bytes. Throws UnreadableFile when the file is binary or not UTF-8 / UTF-16 text. */
export function decodeText(bytes: Buffer): string {
  // (UTF-32's marks first: FF FE 00 00 also starts with UTF-16 LE's)
  if (startsWith(bytes, UTF32LE_BOM) || startsWith(bytes, UTF32BE_BOM)) {
    throw new UnreadableFile("UTF-32 text is not supported; convert the file to UTF-8 (e.g. with iconv)", "encoding");
  }
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return decodeUtf16(bytes, "utf-16le");
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return decodeUtf16(bytes, "utf-16be");
  const nul = bytes.subarray(0, BINARY_SNIFF_BYTES).indexOf(0);
  if (nul !== -1) throw new UnreadableFile(`binary (a NUL byte at byte ${count(nul)})`, "encoding");
  if (!isUtf8(bytes)) {
    const at = firstInvalidUtf8(bytes);
    const line = lineAt(bytes, at);
    throw new UnreadableFile(
      `not UTF-8 text: byte ${hex(bytes[at] as number)} at byte ${count(at)} (line ${count(line)}) is not valid UTF-8; convert the file to UTF-8 (e.g. with iconv)`,
      "encoding",
    );
  }
  // (isUtf8 said yes, so this cannot throw; fatal all the same, so that it never substitutes)
  return new TextDecoder("utf-8", { fatal: true }).decode(startsWith(bytes, UTF8_BOM) ? bytes.subarray(3) : bytes);
}

function decodeUtf16(bytes: Buffer, encoding: "utf-16le" | "utf-16be"): string {
  const name = encoding === "utf-16le" ? "UTF-16 LE" : "UTF-16 BE";
  if (bytes.length % 2 === 1) throw new UnreadableFile(`not ${name} text: an odd number of bytes (${count(bytes.length)})`, "encoding");
  let text: string;
  try {
    // (the decoder drops the byte order mark itself)
    text = new TextDecoder(encoding, { fatal: true }).decode(bytes);
  } catch {
    const at = unpairedSurrogate(bytes, encoding === "utf-16le");
    throw new UnreadableFile(`not ${name} text: an unpaired surrogate at byte ${count(at)}`, "encoding");
  }
  // (NUL characters, not bytes: every other byte of ASCII in UTF-16 is one)
  const nul = text.slice(0, BINARY_SNIFF_BYTES / 2).indexOf("\u0000");
  if (nul !== -1) throw new UnreadableFile(`binary (a NUL character at byte ${count(2 * (nul + 1))})`, "encoding");
  return text;
}

/** The byte offset of the first code unit of UTF-16 `bytes` (after the mark) that is a surrogate without its pair. */
function unpairedSurrogate(bytes: Buffer, littleEndian: boolean): number {
  const unit = (i: number) => (littleEndian ? bytes.readUInt16LE(i) : bytes.readUInt16BE(i));
  for (let i = 2; i + 1 < bytes.length; i += 2) {
    const u = unit(i);
    if (u >= 0xdc00 && u <= 0xdfff) return i;
    if (u >= 0xd800 && u <= 0xdbff) {
      const next = i + 3 < bytes.length ? unit(i + 2) : -1;
      if (next < 0xdc00 || next > 0xdfff) return i;
      i += 2;
    }
  }
  return 0; // (not reached: the decoder only refuses unpaired surrogates once the length is even)
}

/** The 1-based line number of byte `offset`. */
function lineAt(bytes: Buffer, offset: number): number {
  let line = 1;
  for (let i = bytes.indexOf(0x0a); i !== -1 && i < offset; i = bytes.indexOf(0x0a, i + 1)) line++;
  return line;
}
