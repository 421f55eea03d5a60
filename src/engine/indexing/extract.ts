/**
 * What an index takes from an object: the text of its searchable fields. Pure.
 *
 * Every searchable scalar contributes, in the object's own key order (nested objects and lists
 * walked in place): strings as they are, numbers and booleans as JSON writes them, one per line.
 * The field `id` is an identifier, not text: it is searchable only when `searchable.allow` names it.
 */
import type { IndexConfiguration } from "../config.js";
import { ValidationError } from "../errors.js";
import { FieldRules, ownValue } from "../fields.js";
import type { JsonObject } from "../types.js";
import { compileDelimiter, type SegmentDelimiter } from "./segment.js";

/** The searchable text of an object, one scalar value per line. */
export function searchableText(object: JsonObject, config: IndexConfiguration): string {
  return new FieldRules(config)
    .scalars("searchable", object)
    .map(({ value }) => String(value))
    .filter((text) => text.trim() !== "")
    .join("\n");
}

/** A field of an object whose text is split into highlight segments. */
export interface SegmentableField {
  field: string;
  text: string;
}

/**
 * Fields that get highlight segments (spec §2.4.3): searchable fields whose value is a string.
 * Lists and nested objects still count for whole-object search but are not segmented.
 */
export function segmentableFields(object: JsonObject, config: IndexConfiguration): SegmentableField[] {
  const rules = new FieldRules(config);
  return Object.entries(object)
    .filter(([field, value]) => typeof value === "string" && rules.admits("searchable", field))
    .map(([field, value]) => ({ field, text: value as string }));
}

/**
 * The regular expression (RE2) that starts a new segment in `field`, if the configuration sets one.
 * Index creation refuses a delimiter that cannot be used, so this throws only for a stored
 * configuration that predates those checks: ValidationError INVALID_CONFIG, whose message names the
 * field and says why, to be recorded as the object's error in the index (like an unreadable typed value).
 */
export function segmentDelimiter(config: IndexConfiguration, field: string): SegmentDelimiter | undefined {
  const source: unknown = ownValue(config.fields?.segment_delimiter, field);
  if (source === undefined) return undefined;
  const compiled = typeof source === "string" ? compileDelimiter(source) : { ok: false as const, reason: "the pattern is not a string" };
  if (compiled.ok) return compiled.delimiter;
  const path = `configuration.fields.segment_delimiter.${field}`;
  throw new ValidationError("INVALID_CONFIG", `field "${field}": its segment delimiter cannot be used: ${compiled.reason}`, {
    issues: [{ path, message: compiled.reason }],
  });
}

/** Whether the index keeps highlight segments. */
export function highlightsEnabled(config: IndexConfiguration): boolean {
  return config.index_type.highlights?.text === true;
}
