/**
 * Splitting text into segments (spec §2.4). Pure.
 *
 * Default rule: a segment ends after a `.` that is followed by white space or the end of the text
 * (so "3.5" and "e.g.x" stay whole), or at a newline. A custom delimiter (a regular expression)
 * instead marks where a new segment starts. Segments are trimmed of surrounding white space and
 * empty ones are dropped; nothing else ends one: the spec sets no length, so a sentence of any
 * length is one segment, and a highlight is always made of whole sentences. A segment longer than
 * the model's input is embedded in windows combined into one vector, as a whole object is (the
 * provider's `embedTexts` does that for every text it is given). Offsets are JavaScript string
 * indices (UTF-16 code units): `text.slice(start, end) === segment.text`.
 *
 * Custom delimiters are user text run over every object, so they are compiled by RE2 (re2js),
 * which matches in time linear in the text: `(a+)+b` cannot backtrack for ever as a JavaScript
 * RegExp does. The cost per character still grows with the size of the compiled program, so
 * patterns are bounded in length and in program size.
 */
import { createRequire } from "node:module";
import type { RE2JS } from "re2js";

/** re2js, loaded by the first custom delimiter (a command that compiles none never pays for it). */
let re2: typeof RE2JS | undefined;
function re2js(): typeof RE2JS {
  re2 ??= (createRequire(import.meta.url)("re2js") as typeof import("re2js")).RE2JS;
  return re2;
}

/** Longest custom delimiter pattern, in characters. */
export const MAX_DELIMITER_LENGTH = 1000;

/**
 * Largest compiled custom delimiter, in RE2 instructions. Matching takes up to about this many steps
 * per character: at 300, a worst-case pattern segments 100,000 characters in under a second, while
 * realistic delimiters (a heading rule, a list of words) compile to a few dozen to ~150.
 */
export const MAX_DELIMITER_PROGRAM = 300;

/** A compiled custom delimiter (RE2 syntax). Stateless: one can be shared by every call. */
export type SegmentDelimiter = RE2JS;

export type DelimiterCompilation = { ok: true; delimiter: SegmentDelimiter } | { ok: false; reason: string };

/** A JavaScript-only construct RE2 refuses: a lookaround or a backreference. */
const JS_ONLY = /\\[1-9]|\\k<|\(\?<?[=!]/;

function compile(source: string): DelimiterCompilation {
  if (source.length > MAX_DELIMITER_LENGTH) {
    return { ok: false, reason: `the pattern is ${source.length} characters long; at most ${MAX_DELIMITER_LENGTH} are allowed` };
  }
  let delimiter: RE2JS;
  try {
    delimiter = re2js().compile(source);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    const note = JS_ONLY.test(source) ? " (delimiters use RE2 syntax, which has no lookarounds or backreferences)" : " (delimiters use RE2 syntax)";
    return { ok: false, reason: `${why}${note}` };
  }
  const size = delimiter.programSize();
  if (size > MAX_DELIMITER_PROGRAM) {
    return {
      ok: false,
      reason: `the pattern is too complex: it compiles to ${size} RE2 instructions; at most ${MAX_DELIMITER_PROGRAM} are allowed (lower its repetition counts or shorten it)`,
    };
  }
  return { ok: true, delimiter };
}

const compiled = new Map<string, DelimiterCompilation>();
const MAX_CACHED = 256;

/**
 * Compiles a custom delimiter, or says why it cannot be used: longer than MAX_DELIMITER_LENGTH, not
 * RE2 syntax, or a program larger than MAX_DELIMITER_PROGRAM. Memoised by source (the worker asks
 * once per object and field).
 */
export function compileDelimiter(source: string): DelimiterCompilation {
  let result = compiled.get(source);
  if (result === undefined) {
    result = compile(source);
    if (compiled.size >= MAX_CACHED) compiled.clear();
    compiled.set(source, result);
  }
  return result;
}

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

/**
 * Segments of a text: by the default rule, or starting at each match of `delimiter` (empty matches
 * are ignored). RE2 reports match offsets in UTF-16 code units, like JavaScript string indices.
 */
export function segmentText(text: string, delimiter?: SegmentDelimiter): Segment[] {
  const bounds: [number, number][] = [];
  let start = 0;
  if (delimiter) {
    for (const match of delimiter.matchAll(text)) {
      if (match[0] === "" || match.index === undefined) continue;
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
  return bounds.flatMap(([s, e]) => trimmed(text, s, e) ?? []);
}
