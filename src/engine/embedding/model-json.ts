/**
 * Reading a model folder's JSON files (config.json, tokenizer.json, tokenizer_config.json,
 * preprocessor_config.json…) with errors that name the file and the place, never its content: a
 * model folder may be anything on disk, and errors reach HTTP clients and logs. JavaScript's own
 * JSON.parse message quotes the text around the fault, so it is never passed on.
 */
import { readFileSync } from "node:fs";
import { EnvironmentError } from "../errors.js";
import { modelFileStat, modelsFsError } from "./model-cache.js";

/** Model config files are small; a larger one is refused rather than read (tokenizer.json is not read here). */
export const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

const REPAIR_HINT = "Download the model again, or fix the folder.";

/** A file that is not JSON, named with the line and column (UTF-16 code units, from 1) of its first fault. */
export function notJsonError(file: string, text: string): EnvironmentError {
  const offset = jsonErrorOffset(text);
  const where = offset === null ? "" : ` (${lineAndColumn(text, offset)})`;
  return new EnvironmentError("MODEL_UNREADABLE", `The model file ${file} is not valid JSON${where}`, { hint: REPAIR_HINT });
}

/**
 * A model config file's JSON object: undefined when the file is absent or holds another JSON value;
 * MODEL_UNREADABLE when it is larger than MAX_CONFIG_BYTES or not JSON.
 */
export function readModelJson(file: string): Record<string, unknown> | undefined {
  const stat = modelFileStat(file);
  if (!stat) return undefined;
  if (stat.size > MAX_CONFIG_BYTES) {
    throw new EnvironmentError("MODEL_UNREADABLE", `The model file ${file} is larger than ${MAX_CONFIG_BYTES / 1024 / 1024} MB: not a config file`, { hint: REPAIR_HINT });
  }
  const text = readText(file);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw notJsonError(file, text);
  }
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** Larger files are not looked into for a fault (a string of them may not fit in memory). */
const MAX_DIAGNOSED_BYTES = 256 * 1024 * 1024;

/** The first of `files` that is there but not JSON, as its error; null when every one parses (or is absent, or too large to look into). */
export function firstNotJson(files: readonly string[]): EnvironmentError | null {
  for (const file of files) {
    const stat = modelFileStat(file);
    if (!stat || stat.size > MAX_DIAGNOSED_BYTES) continue;
    const text = readText(file);
    try {
      JSON.parse(text);
    } catch {
      return notJsonError(file, text);
    }
  }
  return null;
}

function readText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw modelsFsError(error, "read", file);
  }
}

function lineAndColumn(text: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return offset >= text.length ? `it ends early, at line ${line}` : `line ${line}, column ${offset - lineStart + 1}`;
}

/** Where a JSON text parse fails. */
class Fault {
  constructor(readonly offset: number) {}
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);

function skipSpace(text: string, i: number): number {
  while (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r") i++;
  return i;
}

/** The end of the string starting at `i` (a `"`). */
function stringEnd(text: string, i: number): number {
  for (i++; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22) return i + 1;
    if (code < 0x20) throw new Fault(i);
    if (code !== 0x5c) continue;
    const escape = text[i + 1] ?? "";
    if (escape === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 5;
    else if (ESCAPES.has(escape)) i++;
    else throw new Fault(i);
  }
  throw new Fault(i);
}

/** The end of the string, number or literal starting at `i`. */
function scalarEnd(text: string, i: number): number {
  if (text[i] === '"') return stringEnd(text, i);
  for (const word of ["true", "false", "null"]) if (text.startsWith(word, i)) return i + word.length;
  NUMBER.lastIndex = i;
  if (NUMBER.test(text)) return NUMBER.lastIndex;
  throw new Fault(i);
}

/** After an object's `{` or `,`: a key and its colon. */
function memberStart(text: string, i: number): number {
  if (text[i] !== '"') throw new Fault(i);
  i = skipSpace(text, stringEnd(text, i));
  if (text[i] !== ":") throw new Fault(i);
  return i + 1;
}

/**
 * The offset of the first character at which `text` stops being JSON (RFC 8259, as JSON.parse
 * reads it), `text.length` when it ends too early, or null when it is JSON. Iterative: nesting
 * depth costs no stack.
 */
export function jsonErrorOffset(text: string): number | null {
  const open: string[] = [];
  let i = 0;
  try {
    for (;;) {
      // A value starts here.
      i = skipSpace(text, i);
      const bracket = text[i];
      if (bracket === "{" || bracket === "[") {
        i = skipSpace(text, i + 1);
        if (text[i] !== (bracket === "{" ? "}" : "]")) {
          open.push(bracket);
          if (bracket === "{") i = memberStart(text, i);
          continue;
        }
        i++;
      } else {
        i = scalarEnd(text, i);
      }
      // After a value: close what it ends, then the next value, or the end of the text.
      for (;;) {
        i = skipSpace(text, i);
        const container = open.at(-1);
        if (container === undefined) {
          if (i < text.length) throw new Fault(i);
          return null;
        }
        if (text[i] === ",") {
          i = skipSpace(text, i + 1);
          if (container === "{") i = memberStart(text, i);
          break;
        }
        if (text[i] !== (container === "{" ? "}" : "]")) throw new Fault(i);
        open.pop();
        i++;
      }
    }
  } catch (error) {
    if (error instanceof Fault) return Math.min(error.offset, text.length);
    throw error;
  }
}
