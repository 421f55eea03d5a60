/**
 * Reading the objects of one `objects add` input without holding it whole: JSON Lines files are
 * streamed line by line; a JSON array or a single (pretty-printed) object is read whole, as it
 * must be parsed whole. An input can be read twice (validation, then writing): text and files
 * re-read; a stream is spooled to a file first.
 */
import { createReadStream, createWriteStream } from "node:fs";
import { open, readFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import { pipeline } from "node:stream/promises";
import { parseLine, parseObjectsText, type ParsedObject } from "./parse.js";

/** One input of `objects add`, with a name for messages (file path or `<stdin>`). */
export type ObjectsInput =
  | { source: string; text: string }
  | { source: string; path: string }
  | { source: string; stream: NodeJS.ReadableStream };

/** An input that can be read more than once. */
export type ReplayableInput = { source: string; text: string } | { source: string; path: string };

/** Bytes read to decide how an input is laid out. */
const SNIFF_BYTES = 4096;

/** Spools a stream input to `spoolFile` so it can be read twice; other inputs are returned as they are. */
export async function replayable(input: ObjectsInput, spoolFile: () => string): Promise<ReplayableInput> {
  if (!("stream" in input)) return input;
  const path = spoolFile();
  await pipeline(input.stream, createWriteStream(path));
  return { source: input.source, path };
}

async function wholeText(input: ReplayableInput): Promise<string> {
  return "text" in input ? input.text : readFile(input.path, "utf8");
}

/** The first non-space character of an input (after a byte order mark), or null when it is blank. */
async function firstChar(input: ReplayableInput): Promise<string | null> {
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

function lines(input: ReplayableInput): AsyncIterable<string> {
  if ("text" in input) {
    return (async function* () {
      yield* input.text.split("\n");
    })();
  }
  return createInterface({ input: createReadStream(input.path, { encoding: "utf8" }), crlfDelay: Infinity });
}

/**
 * The objects of one input, in order, each with its `source:line`. Throws ValidationError
 * INVALID_INPUT naming the line of the first malformed object.
 */
export async function* readObjects(input: ReplayableInput): AsyncGenerator<ParsedObject> {
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
