/**
 * Reading the objects of one `objects add` input without holding it whole: JSON Lines files are
 * streamed line by line; a JSON array or a single (pretty-printed) object is read whole, as it
 * must be parsed whole. An input can be read twice (validation, then writing): text and files
 * re-read; a stream is spooled to a file first.
 */
import { createReadStream, createWriteStream } from "node:fs";
import { open, readFile } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import { isUtf8 } from "node:buffer";
import { csvObjects } from "./csv.js";
import { firstInvalidUtf8, invalid, parseLine, parseObjectsText, type ParsedObject } from "./parse.js";

/** One input of `objects add`, with a name for messages (file path or `<stdin>`). */
/**
 * One input of an add. `base` is the directory relative image paths in its objects are resolved
 * against (default: the file's directory, or the working directory for text and streams).
 */
export type ObjectsInput = (
  | { source: string; text: string; base?: string }
  | { source: string; path: string; base?: string }
  | { source: string; stream: NodeJS.ReadableStream; base?: string }
  | { source: string; objects: readonly ParsedObject[]; base?: string }
) & {
  /** How the input is laid out: JSON (an object, an array or JSON Lines), CSV or TSV (csv.ts). Default: by a path's extension, else JSON. */
  format?: InputFormat;
};

export const INPUT_FORMATS = ["json", "csv", "tsv"] as const;
export type InputFormat = (typeof INPUT_FORMATS)[number];

/** An input that can be read more than once. */
export type ReplayableInput = ({ source: string; text: string } | { source: string; path: string } | { source: string; objects: readonly ParsedObject[] }) & { format?: InputFormat };

/** An input's format: as given, else `.csv` and `.tsv` paths by their extension, else JSON. */
export function inputFormat(input: ReplayableInput): InputFormat {
  if (input.format !== undefined) return input.format;
  const extension = "path" in input ? /\.(csv|tsv)$/i.exec(input.path)?.[1]?.toLowerCase() : undefined;
  return extension === "csv" || extension === "tsv" ? extension : "json";
}

/** Bytes read to decide how an input is laid out. */
const SNIFF_BYTES = 4096;

/**
 * Decodes UTF-8 text, refusing malformed bytes (which a lenient decoder turns into U+FFFD, silently
 * changing values and merging distinct ids). `where` names the text for the message; with `lineBase`,
 * the line of the bad byte is added to it (for a whole file: `source:line`).
 */
export function decodeUtf8(bytes: Buffer, where: string, lineBase?: number): string {
  if (isUtf8(bytes)) return bytes.toString("utf8");
  const at = firstInvalidUtf8(bytes);
  let line = lineBase;
  let lineStart = 0;
  if (line !== undefined) {
    for (let i = 0; i < at; i++) if (bytes[i] === 10) [line, lineStart] = [line + 1, i + 1];
  }
  const hex = (bytes[at] as number).toString(16).padStart(2, "0");
  throw invalid(line === undefined ? where : `${where}:${line}`, `invalid UTF-8: byte 0x${hex} at byte ${at - lineStart + 1} of the line is not valid text in UTF-8 (convert the file to UTF-8, e.g. with iconv)`);
}

/**
 * Object ids one per line (`objects delete -`): decoded strictly, so a byte that is not UTF-8 is
 * refused naming its line and byte (read leniently it became U+FFFD, and the id of another object);
 * a byte order mark at the start, a CR before each LF, and blank lines are not ids. A U+FFFD sent
 * as its own bytes (EF BF BD) is UTF-8 and means itself.
 */
export function idLines(bytes: Buffer, source: string): string[] {
  return decodeUtf8(bytes, source, 1)
    .replace(/^\uFEFF/, "")
    .split("\n")
    .map((line) => line.replace(/\r$/, ""))
    .filter((line) => line.trim() !== "");
}

/** Spools a stream input to `spoolFile` so it can be read twice; other inputs are returned as they are. */
export async function replayable(input: ObjectsInput, spoolFile: () => Promise<string>): Promise<ReplayableInput> {
  if (!("stream" in input)) return input;
  const path = await spoolFile();
  await pipeline(input.stream, createWriteStream(path));
  return { source: input.source, path, ...(input.format ? { format: input.format } : {}) };
}

async function wholeText(input: { source: string; text: string } | { source: string; path: string }): Promise<string> {
  return "text" in input ? input.text : decodeUtf8(await readFile(input.path), input.source, 1);
}

/** The first non-space character of an input (after a byte order mark), or null when it is blank. */
async function firstChar(input: { source: string; text: string } | { source: string; path: string }): Promise<string | null> {
  let head: string;
  if ("text" in input) {
    head = input.text.slice(0, SNIFF_BYTES);
  } else {
    const file = await open(input.path, "r");
    try {
      const buffer = Buffer.alloc(SNIFF_BYTES);
      const { bytesRead } = await file.read(buffer, 0, SNIFF_BYTES, 0);
      head = buffer.subarray(0, bytesRead).toString("utf8");
    } finally {
      await file.close();
    }
  }
  const match = /\S/.exec(head.replace(/^\uFEFF/, ""));
  if (match) return match[0];
  return head.length < SNIFF_BYTES ? null : (await wholeText(input)).replace(/^\uFEFF/, "").trim().charAt(0) || null;
}

/** The lines of a file (split at LF, a CR before it dropped), each decoded as strict UTF-8. */
async function* fileLines(path: string, source: string): AsyncGenerator<string> {
  let pieces: Buffer[] = []; // the line read so far, when it spans chunks
  let number = 0;
  const decode = (bytes: Buffer) => {
    number++;
    const end = bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.length - 1 : bytes.length;
    return decodeUtf8(bytes.subarray(0, end), `${source}:${number}`);
  };
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      yield decode(pieces.length > 0 ? Buffer.concat([...pieces, piece]) : piece);
      pieces = [];
      start = nl + 1;
    }
    if (start < chunk.length) pieces.push(chunk.subarray(start));
  }
  if (pieces.length > 0) yield decode(Buffer.concat(pieces));
}

function lines(input: { source: string; text: string } | { source: string; path: string }): AsyncIterable<string> {
  if ("text" in input) {
    return (async function* () {
      yield* input.text.split("\n");
    })();
  }
  return fileLines(input.path, input.source);
}

/**
 * The objects of one input, in order, each with its `source:line`. Throws ValidationError
 * INVALID_INPUT naming the line of the first malformed object.
 */
export async function* readObjects(input: ReplayableInput): AsyncGenerator<ParsedObject> {
  if ("objects" in input) {
    yield* input.objects;
    return;
  }
  const format = inputFormat(input);
  if (format !== "json") {
    yield* await csvObjects(await wholeText(input), input.source, format);
    return;
  }
  const first = await firstChar(input);
  if (first === null) return;
  if (first !== "{") {
    // A JSON array (or something that is not objects at all, which parseObjectsText reports).
    yield* parseObjectsText(await wholeText(input), input.source);
    return;
  }
  let number = 0;
  let seen = false;
  for await (const raw of lines(input)) {
    number++;
    const line = (number === 1 ? raw.replace(/^\uFEFF/, "") : raw).trim();
    if (line === "") continue;
    const where = `${input.source}:${number}`;
    let object: ParsedObject["object"];
    try {
      object = parseLine(line, where);
    } catch (error) {
      // A first object spanning several lines is one pretty-printed object: read it whole (that also reports real errors).
      if (seen) throw error;
      yield* parseObjectsText(await wholeText(input), input.source);
      return;
    }
    seen = true;
    yield { object, where };
  }
}
