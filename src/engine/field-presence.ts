/**
 * Which fields stored objects have, to catch a misspelt field name in an index configuration
 * (`--searchable titel`): a field named in the configuration that no sampled object has is most
 * likely a typo. Pure.
 */
import type { IndexConfiguration } from "./config.js";
import { isPlainObject, isScalar, valueAt } from "./fields.js";
import { namedFilterFields } from "./filter-fields.js";
import type { JsonObject } from "./types.js";

/** Every field path of an object (`a`, `a.b`; through lists), at every depth (objects nest at most 100 levels). */
export function fieldPaths(object: JsonObject, into: Map<string, number> = new Map()): Map<string, number> {
  const seen = new Set<string>();
  const walk = (value: unknown, path: string, depth: number): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item, path, depth);
      return;
    }
    if (path !== "" && !seen.has(path)) {
      seen.add(path);
      into.set(path, (into.get(path) ?? 0) + 1);
    }
    if (!isPlainObject(value)) return;
    for (const [key, child] of Object.entries(value)) walk(child, path === "" ? key : `${path}.${key}`, depth + 1);
  };
  walk(object, "", 0);
  return into;
}

/** The field names a configuration relies on objects having: allow lists, types and segment delimiters. */
export function namedFields(config: IndexConfiguration): string[] {
  const fields = config.fields ?? {};
  return [
    ...new Set([
      ...(fields.crawlable?.allow ?? []),
      ...(fields.searchable?.allow ?? []),
      ...(fields.filterable?.allow ?? []),
      ...Object.keys(fields.types ?? {}),
      ...Object.keys(fields.segment_delimiter ?? {}),
    ]),
  ].filter((name) => name !== "id");
}

/** Edit distance (insertions, deletions, substitutions, adjacent swaps), stopping early above `max`. */
export function editDistance(a: string, b: string, max = 3): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const rows = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((rows[i - 1] as number[])[j] as number + 1, (row[j - 1] as number) + 1, ((rows[i - 1] as number[])[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      row.push(d);
    }
    rows.push(row);
  }
  return (rows[a.length] as number[])[b.length] as number;
}

export interface MissingField {
  name: string;
  /** the field found in the objects that is closest to the name, if one is close */
  suggestion?: string;
}

/** The fields a configuration names that no sampled object has, with the closest existing name where one is close. */
export function missingFields(config: IndexConfiguration, found: ReadonlyMap<string, number>): MissingField[] {
  return absentFields(namedFields(config), found);
}

/** `names` as a message's list: `"titel" (did you mean "title"?), "x"`. */
export function describeMissing(missing: readonly MissingField[]): string {
  return missing.map(({ name, suggestion }) => `"${name}"${suggestion ? ` (did you mean "${suggestion}"?)` : ""}`).join(", ");
}

/** Which of `names` no sampled object has, with the closest existing name where one is close. */
export function absentFields(names: readonly string[], found: ReadonlyMap<string, number>): MissingField[] {
  const existing = [...found.keys()];
  return names
    .filter((name) => !found.has(name))
    .map((name) => {
      const best = existing
        .map((candidate) => ({ candidate, distance: editDistance(name.toLowerCase(), candidate.toLowerCase(), 2) }))
        .filter(({ distance }) => distance <= Math.min(2, Math.floor(name.length / 3)))
        .sort((x, y) => x.distance - y.distance || x.candidate.localeCompare(y.candidate))[0];
      return best ? { name, suggestion: best.candidate } : { name };
    });
}

/** The most common fields found, shallow ones first, for a message: `title, body, tags, …`. */
export function commonFields(found: ReadonlyMap<string, number>, count = 12): string {
  const depth = (name: string) => name.split(".").length;
  const names = [...found].sort((a, b) => depth(a[0]) - depth(b[0]) || b[1] - a[1] || a[0].localeCompare(b[0])).map(([name]) => name);
  return `${names.slice(0, count).join(", ")}${names.length > count ? ", …" : ""}`;
}

/** The warning for fields no sampled object has, or null when every named field was seen. */
export function missingFieldsMessage(config: IndexConfiguration, found: ReadonlyMap<string, number>, sampled: number, total: number): string | null {
  if (sampled === 0) return null;
  const missing = missingFields(config, found);
  if (missing.length === 0) return null;
  const names = describeMissing(missing);
  const scope = sampled < total ? `the first ${sampled.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} stored objects` : `the ${total.toLocaleString("en-US")} stored object${total === 1 ? "" : "s"}`;
  return `None of ${scope} has the field${missing.length === 1 ? "" : "s"} ${names}. Fields they have: ${commonFields(found)}.`;
}

/**
 * The warning for filterable fields that hold lists of objects or of lists in sampled objects
 * (`"variants": [{"size": "M"}]`): a filter matches the elements of lists of text, numbers and
 * booleans, and never an object whose list holds anything else. Null when no such list is found.
 */
export function listFieldsMessage(config: IndexConfiguration, objects: readonly JsonObject[]): string | null {
  // (the fields filters read, read as the worker reads their values)
  const found = namedFilterFields(config).flatMap(({ path, declared }) => {
    const lists = objects.filter((object) => {
      const value = valueAt(object, path);
      return Array.isArray(value) && value.some((element) => element !== null && !isScalar(element));
    });
    if (lists.length === 0) return [];
    const counts = `in ${lists.length.toLocaleString("en-US")} of ${objects.length.toLocaleString("en-US")} sampled objects`;
    return [`"${path}" (${counts}${declared ? "; its declared type puts those objects in the ERROR state" : ""})`];
  });
  if (found.length === 0) return null;
  const one = found.length === 1;
  return `Filterable field${one ? "" : "s"} ${found.join(", ")} hold${one ? "s" : ""} lists of objects or lists: a filter matches the elements of lists of text, numbers and booleans, so it never matches ${one ? "such an object" : "such objects"} (nor does a path into the elements). Store the values to filter on as a list of text or numbers, or leave ${one ? "the field" : "the fields"} out of filterable.`;
}
