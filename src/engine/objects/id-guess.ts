/**
 * Which field of objects that have no id field looks like their id: named like one (`sku`, `_id`,
 * `uuid`, `slug`, `product_id`…), present in every one of them, each value a non-empty string or a
 * whole number, no value twice. An add refuses to give such objects random ids (exit 4, naming the
 * field), as Meilisearch refuses to guess a primary key: re-adding them with the right `--id-field`
 * would otherwise store every object twice. Pure: fed one object at a time, asked at the end.
 */
import type { JsonObject } from "../types.js";

/** Names (lower case, `-` and `_` dropped) that hold ids. */
const ID_NAMES = new Set(["id", "sku", "uuid", "guid", "uid", "key", "slug", "isbn", "asin", "ean", "upc", "gtin", "pk", "identifier", "externalid", "docid", "objectid"]);

/** Whether a field's name says it holds an id: one of ID_NAMES, or ending in `_id`, `-id`, `Id` or `ID` (`product_id`, `productId`). */
export function idLikeName(name: string): boolean {
  if (name.length === 0 || name.length > 64) return false;
  if (ID_NAMES.has(name.toLowerCase().replace(/[-_]/g, ""))) return true;
  return /[a-z0-9][-_](id|ID|Id)$/.test(name) || /[a-z0-9](Id|ID)$/.test(name) || /[a-z0-9][-_](uuid|key|sku|slug)$/i.test(name);
}

/** A value that looks like an id (one word of at most 128 characters, or a whole number), as its stored text. */
function idText(value: unknown): string | null {
  if (typeof value === "string") return value.length > 0 && value.length <= 128 && !/\s/.test(value) ? value : null;
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
  return null;
}

/** At most this many values are kept per candidate field: past it, a candidate is judged on what was seen. */
const MAX_TRACKED = 1_000_000;

export class IdFieldGuess {
  /** Each field still in the running, with the values seen. */
  private candidates: Map<string, Set<string>> | null = null;
  private seen = 0;

  /** Takes one object without an id. */
  add(object: JsonObject): void {
    this.seen++;
    if (this.candidates === null) {
      // (the first object names the candidates: a field must be in every object)
      this.candidates = new Map();
      for (const name of Object.keys(object)) if (idLikeName(name)) this.candidates.set(name, new Set());
    }
    for (const [name, values] of this.candidates) {
      const text = Object.hasOwn(object, name) ? idText(object[name]) : null;
      if (text === null || values.has(text)) this.candidates.delete(name);
      else if (values.size < MAX_TRACKED) values.add(text);
    }
  }

  /** The field that looks like the id of every object taken, the most id-like name first; null when none does (or none was taken). */
  best(): string | null {
    if (this.candidates === null || this.seen === 0) return null;
    const names = [...this.candidates.keys()];
    const rank = (name: string) => (ID_NAMES.has(name.toLowerCase().replace(/[-_]/g, "")) ? 0 : 1);
    names.sort((a, b) => rank(a) - rank(b) || a.length - b.length || a.localeCompare(b));
    return names[0] ?? null;
  }
}
