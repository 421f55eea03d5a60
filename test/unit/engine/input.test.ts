import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/engine/errors.js";
import { idLines, readObjects, replayable, type ReplayableInput } from "../../../src/engine/objects/input.js";

const dir = mkdtempSync(path.join(tmpdir(), "semsearch-input-"));
let n = 0;
function file(text: string, name = `in-${n++}.jsonl`): ReplayableInput {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return { path: p, source: name };
}
async function collect(input: ReplayableInput) {
  const out: [unknown, string][] = [];
  for await (const { object, where } of readObjects(input)) out.push([object.id, where]);
  return out;
}
async function failure(input: ReplayableInput): Promise<ValidationError> {
  try {
    await collect(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error("expected a ValidationError");
}

function bytesFile(parts: (string | number[])[], name = `in-${n++}.jsonl`): ReplayableInput {
  const p = path.join(dir, name);
  writeFileSync(p, Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part) : Buffer.from(part)))));
  return { path: p, source: name };
}

describe("malformed UTF-8 is refused with its line, never read as U+FFFD", () => {
  it("in JSON Lines", async () => {
    const input = bytesFile(['{"id":"a"}\n{"id":"b"}\n{"id":"', [0xc3, 0x28], '"}\n']);
    expect((await failure(input)).message).toMatch(new RegExp(`^${input.source}:3: invalid UTF-8: byte 0xc3 at byte 8 of the line`));
  });

  it("in a JSON array, and in ids that would otherwise merge", async () => {
    const array = bytesFile(['[\n{"id":"a"},\n{"id":"x', [0xfe], '"}\n]']);
    expect((await failure(array)).message).toMatch(new RegExp(`^${array.source}:3: invalid UTF-8`));
    const ids = bytesFile(['{"id":"', [0xff], '"}\n{"id":"', [0xfe], '"}\n']);
    expect((await failure(ids)).message).toMatch(new RegExp(`^${ids.source}:1: invalid UTF-8`));
  });

  it("a line split across read chunks is decoded whole", async () => {
    const long = "é".repeat(100_000); // 200,000 bytes: several chunks, a character may straddle two
    const input = file(`{"id":"a","t":"${long}"}\n{"id":"b"}\n`);
    expect(await collect(input)).toEqual([
      ["a", `${input.source}:1`],
      ["b", `${input.source}:2`],
    ]);
  });
});

describe("readObjects", () => {
  it("streams JSON Lines from a file with line numbers (blank lines, CRLF, BOM)", async () => {
    const input = file('\uFEFF{"id":"a"}\r\n\r\n{"id":"b"}\n  {"id":"c"}  \n');
    expect(await collect(input)).toEqual([
      ["a", `${input.source}:1`],
      ["b", `${input.source}:3`],
      ["c", `${input.source}:4`],
    ]);
  });

  it("reads the same from text as from a file", async () => {
    const text = '{"id":"a"}\n{"id":"b"}\n';
    expect(await collect({ text, source: "t" })).toEqual([
      ["a", "t:1"],
      ["b", "t:2"],
    ]);
  });

  it("reads a JSON array and a pretty-printed single object whole", async () => {
    expect(await collect(file('[\n {"id":"a"},\n {"id":"b"}\n]', "arr.json"))).toEqual([
      ["a", "arr.json:2"],
      ["b", "arr.json:3"],
    ]);
    expect(await collect(file('{\n  "id": "one",\n  "x": 1\n}\n', "one.json"))).toEqual([["one", "one.json:1"]]);
  });

  it("names the line of a malformed line after good ones", async () => {
    const error = await failure(file('{"id":"a"}\n{"id":"b"}\n{"id": oops}\n', "bad.jsonl"));
    expect(error.message).toMatch(/^bad\.jsonl:3: invalid JSON/);
    expect((await failure(file('{"id":"a"}\n[1,2]\n', "arr-line.jsonl"))).message).toBe("arr-line.jsonl:2: each line must be a JSON object");
  });

  it("names the line when the first line is broken", async () => {
    expect((await failure(file('{"id": oops}\n{"id":"b"}\n', "first.jsonl"))).message).toMatch(/^first\.jsonl:1: invalid JSON/);
  });

  it("an empty or blank input has no objects", async () => {
    expect(await collect(file(""))).toEqual([]);
    expect(await collect(file(" \n\n \n"))).toEqual([]);
  });

  it("spools a stream to a file so it can be read twice", async () => {
    const spool = path.join(dir, "spool");
    const input = await replayable({ stream: Readable.from(['{"id":"s1"}\n', '{"id":"s2"}\n']), source: "<stdin>" }, async () => spool);
    expect(input).toEqual({ path: spool, source: "<stdin>" });
    expect(readFileSync(spool, "utf8")).toBe('{"id":"s1"}\n{"id":"s2"}\n');
    expect((await collect(input)).map(([id]) => id)).toEqual(["s1", "s2"]);
    expect((await collect(input)).map(([id]) => id)).toEqual(["s1", "s2"]);
  });

  it("streams a large file line by line", async () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ id: `o${i}`, text: "x".repeat(100) }));
    const input = file(lines.join("\n"));
    let count = 0;
    let last = "";
    for await (const { object, where } of readObjects(input)) {
      count++;
      last = `${object.id as string}@${where}`;
    }
    expect(count).toBe(20_000);
    expect(last).toBe(`o19999@${input.source}:20000`);
  });
});

describe("idLines (objects delete -)", () => {
  it("reads one id a line: a byte order mark, CRs before LFs and blank lines dropped; a U+FFFD sent as its bytes kept", () => {
    expect(idLines(Buffer.from("\uFEFFa\r\n\n  \nkeep\uFFFD\nb c\n"), "<stdin>")).toEqual(["a", "keep\uFFFD", "b c"]);
  });

  it("refuses a byte that is not UTF-8, naming the line and the byte, rather than reading it as U+FFFD", () => {
    const error = (() => {
      try {
        idLines(Buffer.from([...Buffer.from("a\nb\nkeep"), 0xff, 0x0a]), "<stdin>");
      } catch (caught) {
        return caught as ValidationError;
      }
      throw new Error("accepted");
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect([error.code, error.exitCode]).toEqual(["INVALID_INPUT", 4]);
    expect(error.message).toBe("<stdin>:3: invalid UTF-8: byte 0xff at byte 5 of the line is not valid text in UTF-8 (convert the file to UTF-8, e.g. with iconv)");
  });

  it("refuses half of a character written in UTF-8's form (ED A0 80), which a lenient decoder also reads as U+FFFD", () => {
    expect(() => idLines(Buffer.from([0x61, 0xed, 0xa0, 0x80]), "<stdin>")).toThrow("<stdin>:1: invalid UTF-8: byte 0xed at byte 2");
  });
});
