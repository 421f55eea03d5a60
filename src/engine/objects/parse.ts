/**
 * Reading objects from `objects add` input: a JSON array, a single JSON object, or
 * JSON Lines. Pure: takes text, returns objects with where each came from, or throws
 * a ValidationError naming the source and line.
 */
import { ValidationError } from "../errors.js";
import { isPlainObject, ownValue } from "../fields.js";
import type { JsonObject } from "../types.js";
import { jsonErrorOffset } from "../json-error.js";

export interface ParsedObject {
  object: JsonObject;
  /** `file:line` (JSON Lines, single object) or `file[index]` (array element at a line). */
  where: string;
  /** The id it is stored under, when its reader fixes one (a file's path, files.ts): the id field is then not read. */
  id?: string;
}

/** Line number (1-based) of a character offset. */
export function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** `source:line` of the first invalid character of a JSON text. */
export function syntaxWhere(text: string, source: string): string {
  const offset = jsonErrorOffset(text);
  return offset === null ? source : `${source}:${lineOf(text, offset)}`;
}

/** How deep objects and lists may nest in an object (the object itself is level 1). */
export const MAX_DEPTH = 100;
/** Longest object id, in characters. */
export const MAX_ID_LENGTH = 2048;

export function invalid(where: string, message: string): ValidationError {
  return new ValidationError("INVALID_INPUT", `${where}: ${message}`, { issues: [{ path: where, message }] });
}

/** The reason of a JSON.parse failure, without the position wording that varies by Node version. */
export function jsonReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const reason = message.split(/ (?:in JSON )?at position \d+|, "|\n/)[0] ?? message;
  return `invalid JSON (${reason.trim()})`;
}

/** Offset of the first byte that is not part of well-formed UTF-8 (overlong forms and surrogates included), or -1. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i] as number;
    let n: number;
    let min: number;
    if (b < 0x80) {
      i++;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) [n, min] = [1, 0x80];
    else if (b >= 0xe0 && b <= 0xef) [n, min] = [2, 0x800];
    else if (b >= 0xf0 && b <= 0xf4) [n, min] = [3, 0x10000];
    else return i;
    let code = b & (0x3f >> n);
    for (let k = 1; k <= n; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      code = (code << 6) | (c & 0x3f);
    }
    if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return i;
    i += n + 1;
  }
  return -1;
}

/** A JSON path for messages: `a.b[2].c`. */
function describePath(path: readonly (string | number)[]): string {
  return path.map((key, i) => (typeof key === "number" ? `[${key}]` : i === 0 ? key : `.${key}`)).join("") || "(the object)";
}

/**
 * Checks what JSON.parse accepts but semsearch cannot keep exactly: nesting deeper than MAX_DEPTH
 * (later steps walk objects recursively) and numbers beyond the range of a double (`1e400` parses as
 * Infinity, which JSON cannot write back). Iterative, so no input can overflow the stack here.
 */
export function checkValue(value: unknown, where: string): void {
  const stack: { value: unknown; depth: number; path: (string | number)[] }[] = [{ value, depth: 0, path: [] }];
  while (stack.length > 0) {
    const item = stack.pop() as (typeof stack)[number];
    if (typeof item.value === "number" && !Number.isFinite(item.value)) {
      throw invalid(where, `${describePath(item.path)}: the number is out of range (beyond ±1.8e308)`);
    }
    if (typeof item.value !== "object" || item.value === null) continue;
    if (item.depth >= MAX_DEPTH) throw invalid(where, `${describePath(item.path)}: objects and lists nest deeper than ${MAX_DEPTH} levels`);
    if (Array.isArray(item.value)) item.value.forEach((child, i) => stack.push({ value: child, depth: item.depth + 1, path: [...item.path, i] }));
    else for (const [key, child] of Object.entries(item.value)) stack.push({ value: child, depth: item.depth + 1, path: [...item.path, key] });
  }
}

/** Start offset of each top-level element of a JSON array text (already known to parse). */
function arrayElementOffsets(text: string): number[] {
  const offsets: number[] = [];
  let depth = 0;
  let inString = false;
  let expectValue = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (depth === 1 && expectValue && !/\s/.test(c) && c !== "]") {
      offsets.push(i);
      expectValue = false;
    }
    if (c === '"') inString = true;
    else if (c === "[" || c === "{") {
      depth++;
      if (depth === 1) expectValue = true;
    } else if (c === "]" || c === "}") depth--;
    else if (c === "," && depth === 1) expectValue = true;
  }
  return offsets;
}

function parseArray(text: string, source: string): ParsedObject[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw invalid(syntaxWhere(text, source), jsonReason(error));
  }
  const items = value as unknown[];
  const offsets = arrayElementOffsets(text);
  return items.map((item, index) => {
    const where = `${source}:${lineOf(text, offsets[index] ?? 0)}`;
    if (!isPlainObject(item)) throw invalid(where, `array element ${index} is not a JSON object`);
    checkValue(item, where);
    return { object: item, where };
  });
}

/** One line of JSON Lines (already trimmed, not empty) as an object; ValidationError naming `where` otherwise. */
export function parseLine(line: string, where: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw invalid(where, jsonReason(error));
  }
  if (!isPlainObject(value)) throw invalid(where, "each line must be a JSON object");
  checkValue(value, where);
  return value;
}

function parseLines(text: string, source: string): ParsedObject[] {
  const out: ParsedObject[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === "") continue;
    const where = `${source}:${i + 1}`;
    out.push({ object: parseLine(line, where), where });
  }
  return out;
}

/**
 * Parses one input. A text starting with `[` is a JSON array; one that parses whole
 * as an object is a single object; anything else is read as JSON Lines.
 */
export function parseObjectsText(text: string, source: string): ParsedObject[] {
  const body = text.replace(/^\uFEFF/, "");
  const start = body.search(/\S/);
  if (start === -1) return [];
  if (body[start] === "[") return parseArray(body, source);
  if (body[start] === "{") {
    try {
      const value = JSON.parse(body);
      if (isPlainObject(value)) {
        const where = `${source}:${lineOf(body, start)}`;
        checkValue(value, where);
        return [{ object: value, where }];
      }
    } catch {
      // not one object: read it as JSON Lines, which reports the failing line
    }
    return parseLines(body, source);
  }
  throw invalid(`${source}:${lineOf(body, start)}`, "expected a JSON object, an array of objects, or JSON Lines");
}

/**
 * The id of an object: its `idField` value — a non-empty string of at most MAX_ID_LENGTH characters
 * that is valid Unicode (no unpaired surrogate, which storage would turn into U+FFFD and so merge
 * distinct ids) and has no NUL, or an integer within ±(2^53 − 1) written in decimal (larger
 * integers and fractions do not survive JSON parsing exactly: give them as strings); `null` when the
 * field is absent, so the caller generates one.
 */
export function objectId(object: JsonObject, idField: string, where: string): string | null {
  const value = ownValue(object, idField);
  if (value === undefined || value === null) return null;
  const refuse = (why: string) => invalid(where, `field "${idField}" ${why}`);
  if (typeof value === "number") {
    if (Number.isSafeInteger(value)) return String(value);
    throw refuse(`is the number ${JSON.stringify(value)}: a numeric id must be a whole number within ±9007199254740991 (larger numbers and fractions are not read exactly; write the id as a string)`);
  }
  if (typeof value !== "string" || value.length === 0) throw refuse(`must be a non-empty string or a whole number, got ${JSON.stringify(value)?.slice(0, 100)}`);
  if (value.length > MAX_ID_LENGTH) throw refuse(`is ${value.length} characters long; ids are at most ${MAX_ID_LENGTH}`);
  if (value.includes("\u0000")) throw refuse("contains the NUL character");
  // Arrow decodes stored strings with a TextDecoder, which drops a leading byte order mark: "\ufeffx" would come back as "x".
  if (value.startsWith("\ufeff")) throw refuse("starts with U+FEFF (a byte order mark), which storage drops: the id would not be kept exactly");
  if (!value.isWellFormed()) throw refuse(`contains an unpaired surrogate (${JSON.stringify(value).slice(0, 100)}): it is not valid Unicode and cannot be stored exactly`);
  return value;
}

/** Parses a JSON document read from `source`; ValidationError INVALID_JSON naming `source:line` otherwise. */
export function parseJsonText(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const where = syntaxWhere(text, source);
    const reason = jsonReason(error);
    throw new ValidationError("INVALID_JSON", `${where}: ${reason}`, { issues: [{ path: where, message: reason }] });
  }
}
