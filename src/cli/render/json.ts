/** The service's JSON shapes. */
import type { SearchPage } from "../../engine/index.js";

/** Spec §2.5 / §2.7: `{"results": [{"id", "object", "highlights"?}], "pagination": {...}}`. */
export function searchResponse(page: SearchPage): unknown {
  return {
    results: page.hits.map((hit) => ({
      id: hit.id,
      object: hit.object,
      ...(hit.highlights ? { highlights: hit.highlights } : {}),
    })),
    pagination: page.pagination,
  };
}

/** One JSON document, pretty when a person reads it and compact in a pipe. */
export function formatJson(value: unknown, pretty: boolean): string {
  return JSON.stringify(value, null, pretty ? 2 : undefined) + "\n";
}
