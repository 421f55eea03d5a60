/** The service's JSON shapes (defined by the engine, shared with the HTTP server), and how the CLI prints them. */
export { searchResponse, searchResult } from "../../engine/index.js";

/** One JSON document, pretty when a person reads it and compact in a pipe. */
export function formatJson(value: unknown, pretty: boolean): string {
  return JSON.stringify(value, null, pretty ? 2 : undefined) + "\n";
}
