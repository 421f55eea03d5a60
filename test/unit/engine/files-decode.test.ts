import { isUtf8 } from "node:buffer";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeText } from "../../../src/engine/files/decode.js";
import { firstInvalidUtf8 } from "../../../src/engine/objects/parse.js";
import { UnreadableFile } from "../../../src/engine/files/document.js";

const reason = (bytes: Buffer): string => {
  try {
    decodeText(bytes);
  } catch (error) {
    expect(error).toBeInstanceOf(UnreadableFile);
    return (error as UnreadableFile).reason;
  }
  throw new Error("decoded");
};

const utf16 = (text: string, endian: "le" | "be") => {
  const body = Buffer.from(text, "utf16le");
  if (endian === "be") body.swap16();
  return Buffer.concat([Buffer.from(endian === "le" ? [0xff, 0xfe] : [0xfe, 0xff]), body]);
};

describe("decodeText", () => {
  it.each([
    ["UTF-8", Buffer.from("héllo 😀\nwörld", "utf8")],
    ["UTF-8 with a byte order mark (dropped)", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("héllo 😀\nwörld")])],
    ["UTF-16 LE with a byte order mark", utf16("héllo 😀\nwörld", "le")],
    ["UTF-16 BE with a byte order mark", utf16("héllo 😀\nwörld", "be")],
  ])("reads %s", (_, bytes) => {
    expect(decodeText(bytes)).toBe("héllo 😀\nwörld");
  });

  it("reads an empty file, and a byte order mark alone, as no text", () => {
    expect(decodeText(Buffer.alloc(0))).toBe("");
    expect(decodeText(Buffer.from([0xef, 0xbb, 0xbf]))).toBe("");
    expect(decodeText(Buffer.from([0xff, 0xfe]))).toBe("");
  });

  it("keeps a U+FFFD that is in the file (it is text, not a substitution)", () => {
    expect(decodeText(Buffer.from("a\uFFFDb"))).toBe("a\uFFFDb");
  });

  it("calls a file with a NUL byte in its first 8 KiB binary, saying where", () => {
    expect(reason(Buffer.from("%PDF-like header!\u0000rest"))).toBe("binary (a NUL byte at byte 17)");
    expect(reason(Buffer.concat([Buffer.alloc(8191, 0x61), Buffer.from([0])]))).toBe("binary (a NUL byte at byte 8,191)");
    // (further in, a NUL is a character of a text file)
    expect(decodeText(Buffer.concat([Buffer.alloc(8192, 0x61), Buffer.from([0])]))).toHaveLength(8193);
  });

  it("refuses Latin-1 text rather than make mojibake, naming the byte, its offset and its line", () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1} ${"x".repeat(32)}`).join("\n");
    const latin1 = Buffer.concat([Buffer.from(`${lines}\ncaf`), Buffer.from([0xe9]), Buffer.from(" au lait\n")]);
    const at = latin1.indexOf(0xe9);
    expect(reason(latin1)).toBe(
      `not UTF-8 text: byte 0xe9 at byte ${at.toLocaleString("en-US")} (line 31) is not valid UTF-8; convert the file to UTF-8 (e.g. with iconv)`,
    );
  });

  it.each([
    ["a lone continuation byte", [0x61, 0x80], "byte 0x80 at byte 1 (line 1)"],
    ["a sequence cut short by the end of the file", [0x61, 0xe2, 0x82], "byte 0xe2 at byte 1 (line 1)"],
    ["an overlong form", [0xc0, 0xaf], "byte 0xc0 at byte 0 (line 1)"],
    ["an encoded surrogate", [0x0a, 0xed, 0xa0, 0x80], "byte 0xed at byte 1 (line 2)"],
    ["a code point above U+10FFFF", [0xf4, 0x90, 0x80, 0x80], "byte 0xf4 at byte 0 (line 1)"],
  ])("refuses %s", (_, bytes, where) => {
    expect(reason(Buffer.from(bytes))).toBe(`not UTF-8 text: ${where} is not valid UTF-8; convert the file to UTF-8 (e.g. with iconv)`);
  });

  it("refuses UTF-16 with an odd number of bytes or an unpaired surrogate, and UTF-32", () => {
    expect(reason(Buffer.concat([utf16("ab", "le"), Buffer.from([0x63])]))).toBe("not UTF-16 LE text: an odd number of bytes (7)");
    const lone = utf16("ab", "be");
    expect(reason(Buffer.concat([lone, Buffer.from([0xd8, 0x00, 0x00, 0x63])]))).toBe("not UTF-16 BE text: an unpaired surrogate at byte 6");
    expect(reason(Buffer.concat([utf16("a", "le"), Buffer.from([0x00, 0xdc])]))).toBe("not UTF-16 LE text: an unpaired surrogate at byte 4");
    expect(reason(Buffer.from([0xff, 0xfe, 0, 0, 0x61, 0, 0, 0]))).toBe("UTF-32 text is not supported; convert the file to UTF-8 (e.g. with iconv)");
  });

  it("calls UTF-16 with NUL characters near its start binary", () => {
    expect(reason(utf16("ab\u0000c", "le"))).toBe("binary (a NUL character at byte 6)");
  });
});

describe("firstInvalidUtf8", () => {
  it("finds an ill-formed sequence exactly when Node's isUtf8 does (any bytes)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        expect(firstInvalidUtf8(bytes) === -1).toBe(isUtf8(bytes));
      }),
      { numRuns: 5000 },
    );
  });

  it("finds the first one, at the start of its sequence, after any valid text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.uint8Array({ minLength: 1, maxLength: 8 }), (text, tail) => {
        const valid = Buffer.from(text.replace(/[\uD800-\uDFFF]/g, ""));
        const bytes = Buffer.concat([valid, tail]);
        const at = firstInvalidUtf8(bytes);
        if (at === -1) return;
        expect(at).toBeGreaterThanOrEqual(valid.length);
        expect(isUtf8(bytes.subarray(0, at))).toBe(true);
      }),
    );
  });
});
