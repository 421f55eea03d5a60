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
  /** Comma-separated: `highlights`, and the extensions `score` and `explain`. `results_fields` is accepted as an alias. */
  resultFields?: string;
  /**
   * Which parts of a hybrid index rank the results (semsearch extension, for diagnosis and evaluation):
   * `hybrid` (default), `lexical` or `vector`. Neural-only indexes have only `vector`.
   */
  mode?: string;
  /**
   * How much the vector part counts against the lexical part, 0..1 (semsearch extension, Meilisearch's
   * `semanticRatio`; default DEFAULT_VECTOR_WEIGHT): 0 ranks lexically only, 1 by vectors only.
   */
  semanticRatio?: number;
  /** A filter in the filter language (search/filter-syntax.ts); empty filters nothing out. */
  filter?: string;
  /** false: leave each hit's searchable `text` empty (it is only for snippets; default true). */
  snippets?: boolean;
  /**
   * true: say in the page's `warnings` what a person should know of the results: a field no object has
   * in the filter or the object fields (costs a count or a sample), results reordered by highlights.
   */
  fieldWarnings?: boolean;
  /**
   * false: highlights do not reorder the results (the page-through shows highlights in the order a
   * pipe prints). Default true: with `highlights`, objects are ranked by their best highlight (spec §4.4).
   */
  highlightsRank?: boolean;
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
  /** result_fields `score` and `explain` (extensions) */
  score: boolean;
  explain: boolean;
  /** null: the index's own mode. */
  mode: SearchMode | null;
  /** null: the default fusion weight. */
  semanticRatio: number | null;
  /** null: no filter. */
  filter: FilterNode | null;
}

/** `highlights` (the spec's); `score` and `explain` (extensions). */
export const RESULT_FIELDS = ["highlights", "score", "explain"] as const;

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
  const ratio = params.semanticRatio;
  if (ratio !== undefined && !(ratio >= 0 && ratio <= 1)) {
    throw new ValidationError("INVALID_PARAMETER", `semantic_ratio must be from 0 to 1, got ${ratio}`, {
      issues: [{ path: "semantic_ratio", message: "must be from 0 (lexical only) to 1 (vectors only)" }],
    });
  }
  if (ratio !== undefined && params.mode !== undefined) {
    throw new ValidationError("INVALID_PARAMETER", "Give semantic_ratio or mode, not both", {
      issues: [{ path: "semantic_ratio", message: "given with mode" }],
      hint: "semantic_ratio 0 is lexical only, 1 vectors only.",
    });
  }
  return {
    query,
    limit,
    offset,
    objectFields: fields.includes("*") ? null : fields,
    highlights: resultFields.includes("highlights"),
    score: resultFields.includes("score"),
    explain: resultFields.includes("explain"),
    mode: (params.mode as SearchMode | undefined) ?? (ratio === 0 ? "lexical" : ratio === 1 ? "vector" : null),
    semanticRatio: ratio ?? null,
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
