/**
 * Reading objects from `objects add` input: a JSON array, a single JSON object, or
 * JSON Lines. Pure: takes text, returns objects with where each came from, or throws
 * a ValidationError naming the source and line.
 */
import { ValidationError } from "../errors.js";
import { isPlainObject, ownValue } from "../fields.js";
import type { JsonObject } from "../types.js";
import { jsonErrorOffset } from "./json-error.js";

export interface ParsedObject {
  object: JsonObject;
  /** `file:line` (JSON Lines, single object) or `file[index]` (array element at a line). */
  where: string;
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
  return offset < 0 ? source : `${source}:${lineOf(text, offset)}`;
}

function invalid(where: string, message: string): ValidationError {
  return new ValidationError("INVALID_INPUT", `${where}: ${message}`, { issues: [{ path: where, message }] });
}

/** The reason of a JSON.parse failure, without the position wording that varies by Node version. */
export function jsonReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const reason = message.split(/ in JSON at position|, "|\n/)[0] ?? message;
  return `invalid JSON (${reason.trim()})`;
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
      if (isPlainObject(value)) return [{ object: value, where: `${source}:${lineOf(body, start)}` }];
    } catch {
      // not one object: read it as JSON Lines, which reports the failing line
    }
    return parseLines(body, source);
  }
  throw invalid(`${source}:${lineOf(body, start)}`, "expected a JSON object, an array of objects, or JSON Lines");
}

/**
 * The id of an object: its `idField` value (a non-empty string, or a number written in
 * decimal); `null` when the field is absent, so the caller generates one.
 */
export function objectId(object: JsonObject, idField: string, where: string): string | null {
  const value = ownValue(object, idField);
  if (value === undefined || value === null) return null;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value === "string" && value.length > 0 && !value.includes("\u0000")) return value;
  throw invalid(where, `field "${idField}" must be a non-empty string or a number, got ${JSON.stringify(value)}`);
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
