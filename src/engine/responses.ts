/**
 * The service's JSON shapes, shared by the CLI's `--json` and the HTTP server, so both print the
 * same bytes for the same answer. Pure.
 */
import type { SemsearchError } from "./errors.js";
import type { SearchHit, SearchPage } from "./types.js";

/** One result in the spec's shape (§2.5): `{"id", "object", "highlights"?}`. */
export function searchResult(hit: SearchHit): unknown {
  return {
    id: hit.id,
    object: hit.object,
    ...(hit.resultScore !== undefined ? { score: hit.resultScore } : {}),
    ...(hit.explain ? { explain: hit.explain } : {}),
    ...(hit.highlights ? { highlights: hit.highlights } : {}),
  };
}

/** Spec §2.5 / §2.7: `{"results": [...], "pagination": {...}}`. */
export function searchResponse(page: SearchPage): unknown {
  return { results: page.hits.map(searchResult), pagination: page.pagination };
}

/** One error entry: `{"code", "message"}`, with `hint` and `issues` where the error has them. */
export function errorEntry(error: SemsearchError): Record<string, unknown> {
  const entry: Record<string, unknown> = { code: error.code, message: error.message };
  if (error.hint) entry.hint = error.hint;
  if (error.issues?.length) entry.issues = error.issues;
  return entry;
}

/** The error document: `{"errors": [{"code", "message", …}]}`. */
export function errorBody(error: SemsearchError): { errors: Record<string, unknown>[] } {
  return { errors: [errorEntry(error)] };
}
