/**
 * What an index takes from an object: the text of its searchable fields. Pure.
 *
 * Top-level fields that are both crawlable and searchable contribute, in the
 * object's own key order: strings as they are, numbers and booleans as written,
 * arrays of such values joined by newlines. Nested objects do not contribute yet.
 * The field `id` is an identifier, not text: it is searchable only when
 * `searchable.allow` names it.
 */
import { isSearchableField, type IndexConfiguration } from "../config.js";
import type { JsonObject } from "../types.js";

/** Characters of searchable text given to the embedding model; the full text stays in the lexical index. */
export const MAX_EMBED_CHARS = 2000;

function scalarText(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return null;
}

function fieldText(value: unknown): string | null {
  if (Array.isArray(value)) {
    const parts = value.map(scalarText).filter((part): part is string => part !== null && part !== "");
    return parts.length > 0 ? parts.join("\n") : null;
  }
  return scalarText(value);
}

/** The searchable text of an object, fields separated by newlines. */
export function searchableText(object: JsonObject, config: IndexConfiguration): string {
  const idAllowed = config.fields?.searchable?.allow?.includes("id") === true;
  const parts: string[] = [];
  for (const [field, value] of Object.entries(object)) {
    if (field === "id" && !idAllowed) continue;
    if (!isSearchableField(config, field)) continue;
    const text = fieldText(value);
    if (text !== null && text.trim() !== "") parts.push(text);
  }
  return parts.join("\n");
}

/** The part of the searchable text that is embedded: cut at a word boundary near MAX_EMBED_CHARS. */
export function embeddableText(text: string): string {
  if (text.length <= MAX_EMBED_CHARS) return text;
  const cut = text.lastIndexOf(" ", MAX_EMBED_CHARS);
  return text.slice(0, cut > MAX_EMBED_CHARS / 2 ? cut : MAX_EMBED_CHARS);
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
  const idAllowed = config.fields?.searchable?.allow?.includes("id") === true;
  return Object.entries(object)
    .filter(([field, value]) => typeof value === "string" && (field !== "id" || idAllowed) && isSearchableField(config, field))
    .map(([field, value]) => ({ field, text: value as string }));
}

/** The regular expression that starts a new segment in `field`, if the configuration sets one. */
export function segmentDelimiter(config: IndexConfiguration, field: string): RegExp | undefined {
  const source = config.fields?.segment_delimiter?.[field];
  return source === undefined ? undefined : new RegExp(source, "gu");
}

/** Whether the index keeps highlight segments. */
export function highlightsEnabled(config: IndexConfiguration): boolean {
  return config.index_type.highlights?.text === true;
}
