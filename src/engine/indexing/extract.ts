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
import { IMAGE_EXTENSIONS, looksLikeImageReference } from "../images/reference.js";
import type { JsonObject } from "../types.js";
import { compileDelimiter, type SegmentDelimiter } from "./segment.js";

/** The searchable text of an object, one scalar value per line. In an image index, image references are not text. */
export function searchableText(object: JsonObject, config: IndexConfiguration): string {
  const image = imageTest(config);
  return new FieldRules(config)
    .scalars("searchable", object)
    .filter(({ path, value }) => !image(path, value))
    .map(({ value }) => String(value))
    .filter((text) => text.trim() !== "")
    .join("\n");
}

/** Images an object may hold in an image index: each is fetched, decoded and embedded, and kept in memory for its batch. */
export const MAX_IMAGES_PER_OBJECT = 256;

/** One image reference of an object: the value as stored, the field (path) it is in, its place among the object's images. */
export interface ImageValue {
  field: string;
  position: number;
  value: string;
}

const IMAGE_NAME = new RegExp(`\\.(${IMAGE_EXTENSIONS.join("|")})$`, "i");

/**
 * Whether a string is an image reference by its look: a reference by form (looksLikeImageReference:
 * one line, no surrounding space, at most 4,096 characters, an http(s)/file URL or a path ending in
 * an image extension) and, for a URL, a path ending in an image extension (query and fragment
 * aside). Values of declared image fields (`fields.images`) need no look.
 */
export function looksLikeImage(value: string): boolean {
  if (!looksLikeImageReference(value)) return false;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return true;
  try {
    return IMAGE_NAME.test(decodeURIComponentSafe(new URL(value).pathname));
  } catch {
    return false;
  }
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The test an index applies to a searchable value: is it an image reference? (Never, outside image indexes.) */
function imageTest(config: IndexConfiguration): (path: string, value: unknown) => boolean {
  if (config.index_type.name !== "image") return () => false;
  const declared = config.fields?.images ?? [];
  return (path, value) => typeof value === "string" && (declared.some((field) => path === field || path.startsWith(`${field}.`)) ? value.trim() !== "" : looksLikeImage(value));
}

/**
 * The image references of an object in an image index: searchable string values of declared image
 * fields, and any other searchable string that looks like one, in the object's own order (lists in
 * place). Other indexes have none.
 */
export function imageValues(object: JsonObject, config: IndexConfiguration): ImageValue[] {
  const image = imageTest(config);
  return new FieldRules(config)
    .scalars("searchable", object)
    .filter(({ path, value }) => image(path, value))
    .map(({ path, value }, position) => ({ field: path, position, value: value as string }));
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
  const image = imageTest(config);
  return Object.entries(object)
    .filter(([field, value]) => typeof value === "string" && rules.admits("searchable", field) && !image(field, value))
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
