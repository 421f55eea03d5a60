/**
 * Warnings for a search that names a field no object has: a filter on such a field (`colour:red`
 * where objects say `color`) and `--object-fields titel` both give nothing, silently, without them.
 * Each names the field and the closest field the stored objects have (field-presence.ts).
 */
import type { Warning } from "../errors.js";
import { absentFields, describeMissing, fieldPaths } from "../field-presence.js";
import { FIELD_SAMPLE } from "../indexes.js";
import type { StoreReads } from "../store/reads.js";
import type { JsonObject } from "../types.js";

/** The fields of sampled stored objects: every path (a filter can name nested ones), or the top-level keys (what object fields pick). */
async function sampledFields(store: StoreReads, topLevel = false): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  for (const row of await store.sampleObjects(FIELD_SAMPLE)) {
    const object = JSON.parse(row.body) as JsonObject;
    if (topLevel) for (const key of Object.keys(object)) found.set(key, (found.get(key) ?? 0) + 1);
    else fieldPaths(object, found);
  }
  return found;
}

/** The warning for filter fields no indexed object has (`empty`: those the index has no column for), or null. */
export async function filterFieldWarning(store: StoreReads, empty: readonly string[]): Promise<Warning | null> {
  if (empty.length === 0) return null;
  const missing = absentFields(empty, await sampledFields(store));
  const s = empty.length === 1 ? "" : "s";
  return { code: "FILTER_FIELD_EMPTY", message: `No indexed object has the field${s} ${describeMissing(missing.length > 0 ? missing : empty.map((name) => ({ name })))}: the filter's condition${s} on ${empty.length === 1 ? "it" : "them"} match${empty.length === 1 ? "es" : ""} nothing.` };
}

/** The warning for `--object-fields` that none of the page's objects has (an empty page: none), nor any sampled stored object, or null. */
export async function objectFieldWarning(store: StoreReads, requested: readonly string[], objects: readonly JsonObject[]): Promise<Warning | null> {
  const named = requested.filter((field) => field !== "id" && field !== "*");
  if (named.length === 0) return null;
  // (object fields are top-level keys: `a.b` names a key with a dot, not a nested field)
  const onPage = new Set(objects.flatMap((object) => Object.keys(object)));
  const notOnPage = named.filter((field) => !onPage.has(field));
  if (notOnPage.length === 0) return null;
  const missing = absentFields(notOnPage, await sampledFields(store, true));
  if (missing.length === 0) return null;
  const s = missing.length === 1 ? "" : "s";
  return { code: "FIELD_NOT_FOUND", message: `No stored object has the field${s} ${describeMissing(missing)} named in the object fields: ${missing.length === 1 ? "it shows" : "they show"} nothing.` };
}
