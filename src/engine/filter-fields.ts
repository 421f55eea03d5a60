/**
 * Filterable fields of an index and their stored columns. Pure.
 *
 * Each filterable field is a nullable column of the index table (and of its highlight segments
 * table) named `f_<hex of the path's UTF-8 bytes>`: the name is derived from the path, never
 * spelled by it, so any field name is safe as a column and nothing maps names to columns.
 *
 * Which fields get a column:
 * - every field named in `filterable.allow` or in `types` (nested paths included);
 * - with `filterable.allow` omitted, also every top-level field found with a scalar value,
 *   up to MAX_FILTER_COLUMNS (nested fields must be named).
 */
import type { FieldType, IndexConfiguration } from "./config.js";
import { readFieldValue, storageType, storedValue, type FieldValue } from "./field-types.js";
import { FieldRules, isScalar, ownValue, valueAt } from "./fields.js";
import type { FieldResolver } from "./search/filters.js";
import type { JsonObject } from "./types.js";

/** Columns a index discovers on its own (named fields are always kept). */
export const MAX_FILTER_COLUMNS = 256;

const COLUMN = /^f_(?:[0-9a-f]{2})+$/;

export function filterColumn(path: string): string {
  return `f_${Buffer.from(path, "utf8").toString("hex")}`;
}

/** The field path of a filter column name, or null for any other column. */
export function filterColumnPath(column: string): string | null {
  return COLUMN.test(column) ? Buffer.from(column.slice(2), "hex").toString("utf8") : null;
}

export interface FilterField {
  path: string;
  type: FieldType;
  /** Named in `types` (a value that cannot be read as the type is an error). */
  declared: boolean;
}

/** The declared type of a filterable field: `string` unless `types` says otherwise. */
export function fieldType(config: IndexConfiguration, path: string): FieldType {
  return (ownValue(config.fields?.types, path) as FieldType | undefined) ?? "string";
}

/** Fields named by the configuration as filterable (in `filterable.allow` or `types`). */
export function namedFilterFields(config: IndexConfiguration): FilterField[] {
  const rules = new FieldRules(config);
  const types = config.fields?.types ?? {};
  const paths = new Set([...(config.fields?.filterable?.allow ?? []), ...Object.keys(types)]);
  return [...paths]
    .filter((path) => rules.admits("filterable", path))
    .map((path) => ({ path, type: fieldType(config, path), declared: Object.hasOwn(types, path) }));
}

/** Whether the index finds filterable top-level fields on its own (no `filterable.allow`). */
export function discoversFilterFields(config: IndexConfiguration): boolean {
  return config.fields?.filterable?.allow === undefined;
}

export interface FilterValues {
  /** path → value read as the field's type; null when the object has no usable value */
  values: Map<string, FieldValue | null>;
  /** one message per declared field whose value cannot be read as its type */
  errors: string[];
}

/**
 * The filter values of one object: named fields, plus (when the index discovers fields) every
 * admitted top-level scalar field. `id` is the object's id. Lists and nested objects have no
 * value unless the field's type is declared, where they are errors like any unreadable value.
 */
export function filterValues(
  object: JsonObject,
  id: string,
  config: IndexConfiguration,
  named: readonly FilterField[],
  rules = new FieldRules(config),
): FilterValues {
  const values = new Map<string, FieldValue | null>();
  const errors: string[] = [];
  const read = (field: FilterField, value: unknown) => {
    if (value === undefined || value === null) return values.set(field.path, null);
    if (!field.declared && !isScalar(value)) return values.set(field.path, null);
    const reading = readFieldValue(field.type, value);
    if (reading.ok) return values.set(field.path, reading.value);
    errors.push(`field "${field.path}": ${reading.message}`);
    return values.set(field.path, null);
  };
  for (const field of named) read(field, field.path === "id" ? id : valueAt(object, field.path));
  if (discoversFilterFields(config)) {
    // `id` is the object's id, also when it is generated or read from another field (--id-field)
    if (!values.has("id") && rules.admits("filterable", "id")) values.set("id", id);
    for (const [key, value] of Object.entries(object)) {
      if (values.has(key) || !rules.admits("filterable", key)) continue;
      if (isScalar(value)) values.set(key, String(value));
    }
  }
  return { values, errors };
}

/** The stored filter values of one object, by column (booleans as 1/0; no entry: no value). */
export type FilterRecord = Record<string, string | number>;

export interface BatchFilters {
  /** object id → its filter values */
  records: Map<string, FilterRecord>;
  /** object id → why it cannot be indexed (declared fields whose values cannot be read) */
  errors: Map<string, string>;
  /** every column the batch needs (named fields' always), with its storage type */
  columns: Map<string, "string" | "double">;
  /** the columns of named fields, which the cap on discovered columns never drops */
  named: Set<string>;
}

/** The filter values of a batch of objects, the objects that fail their declared types, and the columns needed. */
export function batchFilters(objects: readonly { id: string; object: JsonObject }[], config: IndexConfiguration): BatchFilters {
  const rules = new FieldRules(config);
  const named = namedFilterFields(config);
  const out: BatchFilters = {
    records: new Map(),
    errors: new Map(),
    columns: new Map(named.map((field) => [filterColumn(field.path), storageType(field.type)])),
    named: new Set(named.map((field) => filterColumn(field.path))),
  };
  for (const { id, object } of objects) {
    const read = filterValues(object, id, config, named, rules);
    if (read.errors.length > 0) {
      out.errors.set(id, read.errors.join("; "));
      continue;
    }
    const record: FilterRecord = {};
    for (const [path, value] of read.values) {
      if (value === null) continue;
      const column = filterColumn(path);
      record[column] = storedValue(value);
      if (!out.columns.has(column)) out.columns.set(column, storageType(fieldType(config, path)));
    }
    out.records.set(id, record);
  }
  return out;
}

/**
 * How a filter names fields of an index: filterable fields resolve to their column (or to
 * "empty" when no object has given one a value yet); anything else is refused with a reason.
 */
export function fieldResolver(config: IndexConfiguration, columns: ReadonlySet<string>): FieldResolver {
  const rules = new FieldRules(config);
  const named = new Set(namedFilterFields(config).map((field) => field.path));
  const known = () => {
    const paths = [...new Set([...named, ...[...columns].map(filterColumnPath).filter((path): path is string => path !== null)])].sort();
    return paths.length > 0 ? `Filterable fields: ${paths.slice(0, 20).join(", ")}${paths.length > 20 ? ", …" : ""}.` : "This index has no filterable fields yet.";
  };
  return (path) => {
    if (!rules.admits("filterable", path)) {
      return { kind: "refused", message: `"${path}" is not a filterable field of this index`, hint: known() };
    }
    if (path.includes(".") && !named.has(path)) {
      return {
        kind: "refused",
        message: `"${path}" is a nested field: it is filterable when named in filterable.allow or types`,
        hint: known(),
      };
    }
    const type = fieldType(config, path);
    const column = filterColumn(path);
    return columns.has(column) ? { kind: "column", column, type } : { kind: "empty", type };
  };
}
