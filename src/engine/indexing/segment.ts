/**
 * Splitting text into segments (spec §2.4). Pure.
 *
 * Default rule: a segment ends after a `.` that is followed by white space or the end of the text
 * (so "3.5" and "e.g.x" stay whole), or at a newline. A custom delimiter (a regular expression)
 * instead marks where a new segment starts. Segments are trimmed of surrounding white space;
 * empty ones are dropped; one longer than MAX_SEGMENT_CHARS is cut at a word boundary into
 * pieces, so the model never truncates silently. Offsets are JavaScript string indices (UTF-16
 * code units): `text.slice(start, end) === segment.text`.
 */

/** Longest segment given to the model, in UTF-16 code units. */
export const MAX_SEGMENT_CHARS = 500;

export interface Segment {
  start: number;
  end: number;
  text: string;
}

const DEFAULT_BOUNDARY = /\.(?=\s|$)|\n/g;

function trimmed(text: string, start: number, end: number): Segment | null {
  while (start < end && /\s/.test(text[start] as string)) start++;
  while (end > start && /\s/.test(text[end - 1] as string)) end--;
  return end > start ? { start, end, text: text.slice(start, end) } : null;
}

/** Cuts a segment longer than `max` at white space (or hard at `max`), never inside a surrogate pair. */
function cutLong(text: string, segment: Segment, max: number): Segment[] {
  const out: Segment[] = [];
  let start = segment.start;
  while (segment.end - start > max) {
    let cut = text.lastIndexOf(" ", start + max);
    if (cut <= start + max / 2) cut = start + max;
    const code = text.charCodeAt(cut - 1);
    if (code >= 0xd800 && code <= 0xdbff) cut--;
    const piece = trimmed(text, start, cut);
    if (piece) out.push(piece);
    start = cut;
  }
  const rest = trimmed(text, start, segment.end);
  if (rest) out.push(rest);
  return out;
}

/** Segments of a text: by the default rule, or starting at each match of `delimiter`. */
export function segmentText(text: string, delimiter?: RegExp, max = MAX_SEGMENT_CHARS): Segment[] {
  const bounds: [number, number][] = [];
  let start = 0;
  if (delimiter) {
    const re = new RegExp(delimiter.source, delimiter.flags.includes("g") ? delimiter.flags : delimiter.flags + "g");
    for (const match of text.matchAll(re)) {
      if (match[0] === "") continue;
      bounds.push([start, match.index]);
      start = match.index + match[0].length;
    }
  } else {
    for (const match of text.matchAll(DEFAULT_BOUNDARY)) {
      const end = match.index + match[0].length;
      bounds.push([start, match[0] === "\n" ? match.index : end]);
      start = end;
    }
  }
  bounds.push([start, text.length]);
  return bounds.flatMap(([s, e]) => {
    const segment = trimmed(text, s, e);
    return segment ? cutLong(text, segment, max) : [];
  });
}
