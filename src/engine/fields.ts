/**
 * Field rules (spec §2.2): which parts of an object an index crawls, searches and filters on. Pure.
 *
 * A field is named by a path: a top-level key, or dotted keys into nested objects (`meta.year`);
 * a path reaches through lists, so `authors.name` is the name of every author.
 * - An `allow` entry admits its path and everything below it; an omitted `allow` admits every field.
 * - A `deny` entry removes its path and everything below it, and always wins over `allow`.
 * - Searchable and filterable fields are those the rule admits that are also crawlable.
 */
import type { IndexConfiguration } from "./config.js";
import type { JsonObject } from "./types.js";

export type RuleKind = "crawlable" | "searchable" | "filterable";

/** One allow/deny rule, normalised: `allow: null` means every field. */
export interface FieldRule {
  allow: string[] | null;
  deny: string[];
}

/** A scalar value inside an object: what text search and filters read. */
export type Scalar = string | number | boolean;

/** The segments of a path (`"a.b"` → `["a", "b"]`); empty when the path is malformed (`a..b`, `.a`). */
export function pathSegments(path: string): string[] {
  const segments = path.split(".");
  return segments.every((segment) => segment !== "") ? segments : [];
}

/** Whether `path` is `ancestor` or lies below it. */
function within(path: string, ancestor: string): boolean {
  return path === ancestor || path.startsWith(`${ancestor}.`);
}

export function fieldRule(config: IndexConfiguration, kind: RuleKind): FieldRule {
  const rule = config.fields?.[kind];
  return { allow: rule?.allow ?? null, deny: rule?.deny ?? [] };
}

/** Whether one rule admits a path: deny always wins; an omitted allow admits everything. */
export function ruleAdmits(rule: FieldRule, path: string): boolean {
  if (rule.deny.some((denied) => within(path, denied))) return false;
  return rule.allow === null || rule.allow.some((allowed) => within(path, allowed));
}

/** Whether walking into `path` can still find admitted fields (it is admitted, or an allow entry lies below it). */
function ruleReaches(rule: FieldRule, path: string): boolean {
  if (rule.deny.some((denied) => within(path, denied))) return false;
  return rule.allow === null || rule.allow.some((allowed) => within(path, allowed) || within(allowed, path));
}

/** The effective rules of an index: searchable and filterable both require crawlable. */
export class FieldRules {
  private readonly crawl: FieldRule;
  private readonly rules: Record<RuleKind, FieldRule>;
  private readonly idSearchable: boolean;

  constructor(config: IndexConfiguration) {
    this.crawl = fieldRule(config, "crawlable");
    this.rules = { crawlable: this.crawl, searchable: fieldRule(config, "searchable"), filterable: fieldRule(config, "filterable") };
    // `id` identifies an object; it is searchable text only when searchable.allow names it.
    this.idSearchable = config.fields?.searchable?.allow?.includes("id") === true;
  }

  admits(kind: RuleKind, path: string): boolean {
    if (kind === "searchable" && within(path, "id") && !this.idSearchable) return false;
    return ruleAdmits(this.crawl, path) && ruleAdmits(this.rules[kind], path);
  }

  reaches(kind: RuleKind, path: string): boolean {
    if (kind === "searchable" && within(path, "id") && !this.idSearchable) return false;
    return ruleReaches(this.crawl, path) && ruleReaches(this.rules[kind], path);
  }

  /** Whether a deny entry of the crawl rule lies strictly below `path` (so a value there must be pruned, not copied). */
  private crawlDeniesBelow(path: string): boolean {
    return this.crawl.deny.some((denied) => denied.startsWith(`${path}.`));
  }

  /**
   * Every admitted scalar of an object, in the object's own key order, with its path.
   * Lists are walked element by element under the same path.
   */
  scalars(kind: RuleKind, object: JsonObject): { path: string; value: Scalar }[] {
    const out: { path: string; value: Scalar }[] = [];
    const walk = (value: unknown, path: string): void => {
      if (!this.reaches(kind, path)) return;
      if (Array.isArray(value)) {
        for (const item of value) walk(item, path);
      } else if (isPlainObject(value)) {
        for (const [key, child] of Object.entries(value)) walk(child, `${path}.${key}`);
      } else if (isScalar(value) && this.admits(kind, path)) {
        out.push({ path, value });
      }
    };
    for (const [key, value] of Object.entries(object)) walk(value, key);
    return out;
  }

  /** The object as an index sees it: only crawlable fields (a copy where anything is removed). */
  crawled(object: JsonObject): JsonObject {
    const prune = (value: unknown, path: string): unknown => {
      if (!ruleReaches(this.crawl, path)) return undefined;
      const admitted = ruleAdmits(this.crawl, path);
      if (admitted && !this.crawlDeniesBelow(path)) return value;
      if (Array.isArray(value)) {
        const items = value.map((item) => prune(item, path)).filter((item) => item !== undefined);
        return admitted || items.length > 0 ? items : undefined;
      }
      if (isPlainObject(value)) {
        const out: JsonObject = {};
        for (const [key, child] of Object.entries(value)) {
          const kept = prune(child, `${path}.${key}`);
          if (kept !== undefined) setOwn(out, key, kept);
        }
        return admitted || Object.keys(out).length > 0 ? out : undefined;
      }
      return admitted ? value : undefined;
    };
    if (this.crawl.allow === null && this.crawl.deny.length === 0) return object;
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(object)) {
      const kept = prune(value, key);
      if (kept !== undefined) setOwn(out, key, kept);
    }
    return out;
  }
}

export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function isScalar(value: unknown): value is Scalar {
  return typeof value === "string" || (typeof value === "number" && Number.isFinite(value)) || typeof value === "boolean";
}

/**
 * The value of a record's own key: undefined when the key is missing. Field names are user text, so
 * `constructor`, `toString` or `__proto__` must never reach Object.prototype through a plain `record[key]`.
 */
export function ownValue<T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}

/** Sets a record's own key, `__proto__` included (a plain assignment to `__proto__` would replace the prototype). */
export function setOwn<T>(record: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The value at a path of an object: undefined when missing, and when the path passes through a list. */
export function valueAt(object: JsonObject, path: string): unknown {
  let value: unknown = object;
  for (const segment of pathSegments(path)) {
    if (!isPlainObject(value)) return undefined;
    value = ownValue(value, segment);
  }
  return value;
}
