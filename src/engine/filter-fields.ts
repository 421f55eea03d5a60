/**
 * Filterable fields of an index and their stored columns. Pure.
 *
 * Each filterable field is a nullable column of the index table (and of its highlight segments
 * table) named `f_<hex of the path's UTF-8 bytes>`: the name is derived from the path, never
 * spelled by it, so any field name is safe as a column and nothing maps names to columns. A field
 * that holds a list of scalars in some object gets a second, list-typed column `l_<hex>` for those
 * objects' elements: a filter matches an object when its scalar, or any element of its list, does.
 * Fields that hold scalars in some objects and lists in others (`"tags": "sale"`, `["sale", "new"]`)
 * need no schema change when the first list arrives, and scalar columns keep their indexes.
 *
 * Which fields get a column:
 * - every field named in `filterable.allow` or in `types` (nested paths included);
 * - with `filterable.allow` omitted, also every top-level field found with a scalar value or a
 *   list of them, up to MAX_FILTER_COLUMNS fields (nested fields must be named).
 */
import type { FieldType, IndexConfiguration } from "./config.js";
import { readFieldValue, storageType, storedValue, type FieldValue } from "./field-types.js";
import { FieldRules, isScalar, ownValue, valueAt } from "./fields.js";
import type { FieldResolver } from "./search/filters.js";
import type { JsonObject } from "./types.js";

/** Fields with columns an index discovers on its own, at most (named fields are always kept). */
export const MAX_FILTER_COLUMNS = 256;

const COLUMN = /^[fl]_(?:[0-9a-f]{2})+$/;

/** The column of a field's scalar values. */
export function filterColumn(path: string): string {
  return `f_${Buffer.from(path, "utf8").toString("hex")}`;
}

/** The column of a field's lists: each object's list elements, read as the field's type. */
export function listColumn(path: string): string {
  return `l_${Buffer.from(path, "utf8").toString("hex")}`;
}

/** The field path of a filter column name (scalar or list), or null for any other column. */
export function filterColumnPath(column: string): string | null {
  return COLUMN.test(column) ? Buffer.from(column.slice(2), "hex").toString("utf8") : null;
}

/** Whether a filter column holds lists. */
export function isListColumn(column: string): boolean {
  return column.startsWith("l_");
}

/** The storage type of a filter column of an index, or null for a column that is not one. */
export function columnStorage(config: IndexConfiguration, column: string): FilterColumnType | null {
  const path = filterColumnPath(column);
  if (path === null) return null;
  const type = storageType(fieldType(config, path));
  return isListColumn(column) ? `${type}[]` : type;
}

/**
 * Storage types of filter columns: text, numbers, and lists of either. Booleans are stored as 1/0
 * doubles: apache-arrow 18 writes an all-null boolean column with no validity bitmap, which
 * LanceDB rejects.
 */
export type FilterColumnType = "string" | "double" | "string[]" | "double[]";

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
  /** path → value (or a list's distinct elements) read as the field's type; null when the object has no usable value */
  values: Map<string, FieldValue | FieldValue[] | null>;
  /** one message per declared field whose value cannot be read as its type */
  errors: string[];
}

/**
 * The filter values of one object: named fields, plus (when the index discovers fields) every
 * admitted top-level scalar field or list of scalars. `id` is the object's id. A list's value is
 * its distinct elements, nulls left out (an empty list has no value). Nested objects, and lists
 * holding objects or lists, have no value unless the field's type is declared, where they are
 * errors like any unreadable value.
 */
export function filterValues(
  object: JsonObject,
  id: string,
  config: IndexConfiguration,
  named: readonly FilterField[],
  rules = new FieldRules(config),
): FilterValues {
  const values = new Map<string, FieldValue | FieldValue[] | null>();
  const errors: string[] = [];
  const read = (field: FilterField, value: unknown) => {
    if (value === undefined || value === null) return values.set(field.path, null);
    if (Array.isArray(value)) return values.set(field.path, readList(field, value, errors));
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
      // (an empty key has no column: `f_` names none, and no filter can name the field)
      if (key === "" || values.has(key) || !rules.admits("filterable", key)) continue;
      if (isScalar(value)) values.set(key, String(value));
      else if (Array.isArray(value)) values.set(key, readList({ path: key, type: "string", declared: false }, value, errors));
    }
  }
  return { values, errors };
}

/** A list's distinct elements read as the field's type (null: no value), or an error in `errors` for a declared field. */
function readList(field: FilterField, list: readonly unknown[], errors: string[]): FieldValue[] | null {
  const out = new Set<FieldValue>();
  for (const [at, element] of list.entries()) {
    if (element === null) continue;
    if (!isScalar(element)) {
      if (field.declared) errors.push(`field "${field.path}": element ${at + 1} of the list is ${Array.isArray(element) ? "a list" : "an object"}: list elements are filtered on when they are text, numbers or booleans`);
      return null;
    }
    const reading = readFieldValue(field.type, element);
    if (!reading.ok) {
      if (field.declared) errors.push(`field "${field.path}": element ${at + 1} of the list: ${reading.message}`);
      return null;
    }
    out.add(reading.value);
  }
  return out.size > 0 ? [...out] : null;
}

/** The stored filter values of one object, by column (booleans as 1/0; no entry: no value). */
export type FilterRecord = Record<string, string | number | string[] | number[]>;

export interface BatchFilters {
  /** object id → its filter values */
  records: Map<string, FilterRecord>;
  /** object id → why it cannot be indexed (declared fields whose values cannot be read) */
  errors: Map<string, string>;
  /** every column the batch needs (named fields' scalar columns always), with its storage type */
  columns: Map<string, FilterColumnType>;
  /** the columns of named fields (scalar and list), which the cap on discovered fields never drops */
  named: Set<string>;
}

/**
 * The filter values of a batch of objects, the objects that fail their declared types, and the
 * columns needed. String values are stored in the form `form` gives (the index's, text-form.ts).
 */
export function batchFilters(objects: readonly { id: string; object: JsonObject }[], config: IndexConfiguration, form: (text: string) => string = (text) => text): BatchFilters {
  const rules = new FieldRules(config);
  const named = namedFilterFields(config);
  const out: BatchFilters = {
    records: new Map(),
    errors: new Map(),
    columns: new Map(named.map((field) => [filterColumn(field.path), storageType(field.type)])),
    named: new Set(named.flatMap((field) => [filterColumn(field.path), listColumn(field.path)])),
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
      const column = Array.isArray(value) ? listColumn(path) : filterColumn(path);
      const stored = (one: FieldValue) => {
        const kept = storedValue(one);
        return typeof kept === "string" ? form(kept) : kept;
      };
      // (a list's elements stay distinct: two forms of one text are one element)
      record[column] = Array.isArray(value) ? ([...new Set(value.map(stored))] as string[] | number[]) : stored(value);
      if (!out.columns.has(column)) out.columns.set(column, columnStorage(config, column) as FilterColumnType);
    }
    out.records.set(id, record);
  }
  return out;
}

/**
 * The columns of a batch that an index table holding `present` gets: those of named fields and of
 * fields that have a column already (a field's list column joins its scalar one, and the other way
 * round), and those of new discovered fields while fewer than MAX_FILTER_COLUMNS fields have
 * columns: the cap counts fields, so a field's lists are never dropped because its scalars took a
 * place. `capped`: a discovered field was left out.
 */
export function columnsToAdd(present: ReadonlySet<string>, { columns, named }: Pick<BatchFilters, "columns" | "named">): { add: Map<string, FilterColumnType>; capped: boolean } {
  const fields = new Set([...present].map(filterColumnPath).filter((path) => path !== null));
  const add = new Map<string, FilterColumnType>();
  let capped = false;
  for (const [column, type] of columns) {
    const path = filterColumnPath(column);
    if (present.has(column) || path === null) continue;
    if (named.has(column) || fields.has(path) || fields.size < MAX_FILTER_COLUMNS) {
      add.set(column, type);
      fields.add(path);
    } else capped = true;
  }
  return { add, capped };
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
    const list = listColumn(path);
    if (!columns.has(column) && !columns.has(list)) return { kind: "empty", type };
    return { kind: "column", ...(columns.has(column) ? { column } : {}), ...(columns.has(list) ? { list } : {}), type };
  };
}
