/**
 * Tab-separated values for pipes (as `gh` prints them): a header line, then one line per row, each
 * value whole (never cut to a column), text as it is, anything else as JSON; tabs and line breaks
 * inside a value become spaces, and terminal styling is dropped, so `cut -f2` and `awk -F'\t'` work.
 */
import { stripVTControlCharacters } from "node:util";

function field(value: unknown): string {
  if (value === undefined || value === null) return "";
  const text = typeof value === "string" ? stripVTControlCharacters(value) : JSON.stringify(value);
  return text.replace(/[\t\r\n]+/g, " ");
}

export function tsv(head: readonly string[], rows: readonly (readonly unknown[])[]): string {
  return [head, ...rows].map((row) => row.map(field).join("\t") + "\n").join("");
}
