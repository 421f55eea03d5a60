/** Showing a highlight in a table cell: query words emphasised, cut to fit around the first match. */
import { displayReference, type SearchHit } from "../../engine/index.js";
import { chalk, printable } from "./style.js";

/**
 * Lower-case query words of 3 letters or more, as stems of at most 5 letters (so "cells" finds
 * "cell"), with accents composed (NFC): a query pasted with decomposed ones finds the same words.
 */
export function queryStems(query: string): string[] {
  const words = query.normalize("NFC").toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [];
  return [...new Set(words.map((word) => word.slice(0, Math.max(3, Math.min(word.length, 5)))))];
}

/**
 * Spans [start, end) of words in `text` that start with one of the stems, compared with their
 * accents composed; the spans are of `text` as given (a decomposed accent is part of its word).
 */
export function matchSpans(text: string, stems: readonly string[]): [number, number][] {
  if (stems.length === 0) return [];
  const spans: [number, number][] = [];
  for (const match of text.matchAll(/[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/gu)) {
    const word = match[0].normalize("NFC").toLowerCase();
    if (stems.some((stem) => word.startsWith(stem))) spans.push([match.index, match.index + match[0].length]);
  }
  return spans;
}

/**
 * One line of at most `width` characters of `text` (white space folded), starting a little before the
 * first query word, with query words in bold and an ellipsis where text was cut.
 */
/** Where a snippet cut before `end` ends: after the last whole word, when that keeps most of the `width` (else at `end`). */
export function wordEnd(text: string, start: number, end: number, width: number): number {
  if (end >= text.length || text[end] === " ") return end;
  const space = text.lastIndexOf(" ", end);
  return space > start && end - space <= width / 3 ? space : end;
}

export function renderHighlight(text: string, query: string, width: number): string {
  const flat = printable(text.replace(/\s+/g, " ").trim()); // (a stored value must not drive the terminal)
  const spans = matchSpans(flat, queryStems(query));
  let start = 0;
  const first = spans[0];
  if (first && first[0] > width / 3 && flat.length > width) start = Math.max(0, Math.min(first[0] - Math.floor(width / 4), flat.length - width + 1));
  // (a cut snippet starts and ends at a word's edge when one is near)
  if (start > 0 && flat[start - 1] !== " ") {
    const next = flat.indexOf(" ", start);
    if (next >= 0 && next + 1 - start <= width / 4 && (!first || next + 1 <= first[0])) start = next + 1;
  }
  const prefix = start > 0 ? "…" : "";
  let end = Math.min(flat.length, start + width - prefix.length);
  const suffix = end < flat.length ? "…" : "";
  if (suffix) end = wordEnd(flat, start, end - 1, width);
  let out = prefix;
  let cursor = start;
  for (const [s, e] of spans) {
    if (e <= start || s >= end) continue;
    const from = Math.max(s, start);
    const to = Math.min(e, end);
    out += flat.slice(cursor, from) + chalk.bold.yellow(flat.slice(from, to));
    cursor = to;
  }
  return out + flat.slice(cursor, end) + suffix;
}

/** What a table cell or a list shows of a result: its best highlight's text, or its best image's identifier, else its text. */
export function highlightLabel(hit: SearchHit): string {
  const best = hit.highlights?.[0];
  if (!best) return hit.image ?? hit.text;
  return "highlight_type" in best ? best.highlight.text : displayReference(best.media_identifier);
}
