/** Validation of search parameters (spec §4.2). Pure. */
import { ValidationError } from "../errors.js";
import { integerIn } from "../params.js";
import { setOwn } from "../fields.js";
import { parseFilter, type FilterNode } from "./filter-syntax.js";
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_LENGTH, MAX_RESULTS } from "./limits.js";

/** Search parameters as a caller gives them (CLI flags or HTTP query parameters). */
export interface SearchParams {
  query: string;
  /** Page size, 1..MAX_LIMIT (default 10). */
  limit?: number;
  /** Results to skip, 0..MAX_RESULTS-1 (default 0). */
  offset?: number;
  /** `*` for every field, or a comma-separated list (default `id`). */
  objectFields?: string;
  /** Comma-separated; `highlights` is the only value. `results_fields` is accepted as an alias. */
  resultFields?: string;
  /**
   * Which parts of a hybrid index rank the results (semsearch extension, for diagnosis and evaluation):
   * `hybrid` (default), `lexical` or `vector`. Neural-only indexes have only `vector`.
   */
  mode?: string;
  /** Weight of the vector part in hybrid fusion, 0..1 (default DEFAULT_VECTOR_WEIGHT); for evaluation and tuning. */
  vectorWeight?: number;
  /** A filter in the filter language (search/filter-syntax.ts); empty filters nothing out. */
  filter?: string;
  /** false: leave each hit's searchable `text` empty (it is only for snippets; default true). */
  snippets?: boolean;
  /** true: say in the page's `warnings` when the filter or the object fields name a field no object has (for a person; costs a count or a sample). */
  fieldWarnings?: boolean;
}

export const SEARCH_MODES = ["hybrid", "lexical", "vector"] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

export interface SearchRequest {
  query: string;
  limit: number;
  offset: number;
  /** null: every field. */
  objectFields: string[] | null;
  highlights: boolean;
  /** null: the index's own mode. */
  mode: SearchMode | null;
  vectorWeight: number | null;
  /** null: no filter. */
  filter: FilterNode | null;
}

export const RESULT_FIELDS = ["highlights"] as const;

function splitList(value: string): string[] {
  return value
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "");
}

export function parseSearchParams(params: SearchParams): SearchRequest {
  const query = params.query.trim();
  if (query === "") {
    throw new ValidationError("INVALID_PARAMETER", "query must not be empty", { issues: [{ path: "query", message: "empty" }] });
  }
  const characters = query.length > MAX_QUERY_LENGTH ? [...query].length : query.length; // code points, not UTF-16 units
  if (characters > MAX_QUERY_LENGTH) {
    const message = `${characters.toLocaleString("en-US")} characters long; at most ${MAX_QUERY_LENGTH.toLocaleString("en-US")} are allowed`;
    throw new ValidationError("INVALID_PARAMETER", `query is ${message}`, { issues: [{ path: "query", message }], hint: "Search with the passage that matters most." });
  }
  const limit = integerIn("limit", params.limit, DEFAULT_LIMIT, 1, MAX_LIMIT);
  const offset = integerIn("offset", params.offset, 0, 0, MAX_RESULTS - 1);
  const fields = params.objectFields === undefined ? ["id"] : splitList(params.objectFields);
  const resultFields = params.resultFields === undefined ? [] : splitList(params.resultFields);
  for (const field of resultFields) {
    if (!(RESULT_FIELDS as readonly string[]).includes(field)) {
      throw new ValidationError("INVALID_PARAMETER", `Unknown result field "${field}". Known: ${RESULT_FIELDS.join(", ")}`, {
        issues: [{ path: "result_fields", message: `unknown value "${field}"` }],
      });
    }
  }
  if (params.mode !== undefined && !(SEARCH_MODES as readonly string[]).includes(params.mode)) {
    throw new ValidationError("INVALID_PARAMETER", `Unknown search mode "${params.mode}". Known: ${SEARCH_MODES.join(", ")}`, {
      issues: [{ path: "mode", message: `unknown value "${params.mode}"` }],
    });
  }
  const weight = params.vectorWeight;
  if (weight !== undefined && !(weight >= 0 && weight <= 1)) {
    throw new ValidationError("INVALID_PARAMETER", `vector weight must be from 0 to 1, got ${weight}`, {
      issues: [{ path: "vector_weight", message: "must be from 0 to 1" }],
    });
  }
  return {
    query,
    limit,
    offset,
    objectFields: fields.includes("*") ? null : fields,
    highlights: resultFields.includes("highlights"),
    mode: (params.mode as SearchMode | undefined) ?? null,
    vectorWeight: weight ?? null,
    filter: params.filter === undefined ? null : parseFilter(params.filter),
  };
}

/** The object as returned for `object_fields`: `id` is the object id even when the stored object has none. */
export function projectObject(id: string, object: Record<string, unknown>, fields: string[] | null): Record<string, unknown> {
  if (fields === null) return object;
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    // (an `"id": null` is no id, as adds read it: the object's generated id stands in for it)
    if (field === "id" && (!Object.hasOwn(object, "id") || object.id === null)) out.id = id;
    else if (Object.hasOwn(object, field)) setOwn(out, field, object[field]);
  }
  return out;
}
