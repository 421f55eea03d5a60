/**
 * Reading values as the declared type of a filterable field (`configuration.fields.types`). Pure.
 *
 * Stored and compared forms: `string` as text, `int` and `float` as numbers, `bool` as a boolean,
 * `datetime` as milliseconds since the Unix epoch (UTC).
 */
import type { FieldType } from "./config.js";

export type FieldValue = string | number | boolean;

export type Reading = { ok: true; value: FieldValue } | { ok: false; message: string };

/** The stored form of a value: booleans as 1 and 0 (filter columns are text or numbers). */
export function storedValue(value: FieldValue): string | number {
  return typeof value === "boolean" ? (value ? 1 : 0) : value;
}

/** The storage type of a field type's column. */
export function storageType(type: FieldType): "string" | "double" {
  return type === "string" ? "string" : "double";
}

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2})))?$/;
/** Milliseconds in 400 Gregorian years (146,097 days): Date.UTC maps years 0–99 to 1900–1999, so those are shifted by a cycle. */
const CYCLE_MS = 146_097 * 86_400_000;

const ok = (value: FieldValue): Reading => ({ ok: true, value });
const fail = (message: string): Reading => ({ ok: false, message });

function describe(value: unknown): string {
  if (Array.isArray(value)) return "a list";
  if (value === null) return "null";
  if (typeof value === "object") return "an object";
  return JSON.stringify(value);
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * An RFC 3339 date-time (`2024-05-01T12:00:00Z`, `2024-05-01T14:00:00.5+02:00`) or full date
 * (`2024-05-01`, midnight UTC) as epoch milliseconds; null when it is not one. A date-time needs
 * its offset: without one the instant would depend on the reader's time zone.
 */
export function parseDateTime(text: string): number | null {
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null;
  if (m[4] === undefined) return utc(year, month, day, 0, 0, 0, 0);
  if (m[8] === undefined && m[9] === undefined) return null;
  const [hour, minute, second] = [Number(m[4]), Number(m[5]), Number(m[6])];
  // RFC 3339 allows a leap second (:60); it is read as the last millisecond of that minute.
  if (hour > 23 || minute > 59 || second > 60) return null;
  const millis = second === 60 ? 999 : Number((m[7] ?? "").padEnd(3, "0").slice(0, 3));
  let ms = utc(year, month, day, hour, minute, Math.min(second, 59), millis);
  if (m[9] !== undefined) {
    const [offsetHours, offsetMinutes] = [Number(m[10]), Number(m[11])];
    if (offsetHours > 23 || offsetMinutes > 59) return null;
    ms -= (m[9] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  }
  return ms;
}

function utc(year: number, month: number, day: number, hour: number, minute: number, second: number, ms: number): number {
  if (year >= 100) return Date.UTC(year, month - 1, day, hour, minute, second, ms);
  return Date.UTC(year + 400, month - 1, day, hour, minute, second, ms) - CYCLE_MS;
}

function readNumber(type: "int" | "float", text: string): number | null {
  const trimmed = text.trim();
  if (!(type === "int" ? INTEGER : DECIMAL).test(trimmed)) return null;
  const n = Number(trimmed);
  if (!Number.isFinite(n) || (type === "int" && !Number.isSafeInteger(n))) return null;
  return n;
}

/**
 * Reads a value of an object as `type`. Numbers and booleans read as strings the way JSON writes
 * them; numeric and boolean strings (`"42"`, `"true"`) read as numbers and booleans.
 */
export function readFieldValue(type: FieldType, value: unknown): Reading {
  const expected = `expected ${type === "int" ? "an int" : `a ${type}`}, got ${describe(value)}`;
  switch (type) {
    case "string":
      return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? ok(String(value)) : fail(expected);
    case "int":
      if (typeof value === "number") return Number.isSafeInteger(value) ? ok(value) : fail(expected);
      return readText(type, value, expected);
    case "float":
      if (typeof value === "number") return Number.isFinite(value) ? ok(value) : fail(expected);
      return readText(type, value, expected);
    case "bool":
      return typeof value === "boolean" ? ok(value) : readText(type, value, expected);
    case "datetime":
      return readText(type, value, `expected an RFC 3339 datetime, got ${describe(value)}`);
  }
}

function readText(type: FieldType, value: unknown, expected: string): Reading {
  if (typeof value !== "string") return fail(expected);
  const reading = readLiteral(type, value);
  return reading.ok ? reading : fail(expected);
}

/** Reads a literal of a filter (always text) as `type`. */
export function readLiteral(type: FieldType, text: string): Reading {
  switch (type) {
    case "string":
      return ok(text);
    case "int":
    case "float": {
      const n = readNumber(type, text);
      return n === null ? fail(`expected ${type === "int" ? "an int" : "a float"}, got ${JSON.stringify(text)}`) : ok(n);
    }
    case "bool": {
      const lower = text.trim().toLowerCase();
      return lower === "true" || lower === "false" ? ok(lower === "true") : fail(`expected true or false, got ${JSON.stringify(text)}`);
    }
    case "datetime": {
      const ms = parseDateTime(text.trim());
      return ms === null ? fail(`expected an RFC 3339 date or datetime with offset, got ${JSON.stringify(text)}`) : ok(ms);
    }
  }
}
