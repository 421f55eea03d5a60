/** The service's JSON shapes. */
import type { SearchHit, SearchPage } from "../../engine/index.js";

/** One result in the spec's shape (§2.5): `{"id", "object", "highlights"?}`. */
export function searchResult(hit: SearchHit): unknown {
  return { id: hit.id, object: hit.object, ...(hit.highlights ? { highlights: hit.highlights } : {}) };
}

/** Spec §2.5 / §2.7: `{"results": [...], "pagination": {...}}`. */
export function searchResponse(page: SearchPage): unknown {
  return { results: page.hits.map(searchResult), pagination: page.pagination };
}

/** One JSON document, pretty when a person reads it and compact in a pipe. */
export function formatJson(value: unknown, pretty: boolean): string {
  return JSON.stringify(value, null, pretty ? 2 : undefined) + "\n";
}
