/**
 * Text highlights as a person sees them: the highlighted span of a field, found by its offsets
 * (UTF-16 code units, as the API counts them), with some of the text around it. Cuts never split a
 * character: not a surrogate pair, not a letter from its combining marks, not an emoji sequence.
 * Pure.
 */

export interface TextHighlight {
  highlight_type: "text";
  references: { source: string; position: { start_char: number; end_char: number } }[];
  highlight: { text: string };
}

/** A highlight drawn: `before` and `after` are context, `marked` the span; `cut*`: the field goes on. */
export interface HighlightView {
  source: string | null;
  before: string;
  marked: string;
  after: string;
  cutBefore: boolean;
  cutAfter: boolean;
}

const segmenter = typeof Intl !== "undefined" && "Segmenter" in Intl ? new Intl.Segmenter(undefined, { granularity: "grapheme" }) : null;

/** The nearest character boundary at or before `i` (a grapheme cluster's start). */
export function boundaryAtOrBefore(text: string, i: number): number {
  if (i <= 0) return 0;
  if (i >= text.length) return text.length;
  const from = Math.max(0, i - 64);
  let boundary = from;
  if (segmenter) {
    for (const { index } of segmenter.segment(text.slice(from, Math.min(text.length, i + 64)))) {
      if (from + index > i) break;
      boundary = from + index;
    }
    // (a window that starts inside a cluster sees a false boundary at its start only when i is within 64 units of it)
    return from === 0 || boundary > from ? boundary : i;
  }
  // Without Intl.Segmenter: never between a high and a low surrogate.
  const code = text.charCodeAt(i);
  return code >= 0xdc00 && code <= 0xdfff ? i - 1 : i;
}

/** The nearest character boundary at or after `i`. */
export function boundaryAtOrAfter(text: string, i: number): number {
  if (i <= 0) return 0;
  if (i >= text.length) return text.length;
  const before = boundaryAtOrBefore(text, i);
  if (before === i) return i;
  const from = before;
  if (segmenter) {
    for (const { index } of segmenter.segment(text.slice(from, Math.min(text.length, i + 64)))) {
      if (from + index >= i) return from + index;
    }
    return Math.min(text.length, i + 64);
  }
  return i + 1;
}

/**
 * The highlight in its field: `context` code units either side at most, cut at a space when one is
 * near, else at a character boundary. When the field is not in `object` (not returned, not text) or
 * its slice is not the highlight's text, the highlight's own text, all marked.
 */
export function highlightView(highlight: TextHighlight, object: Record<string, unknown>, context = 80): HighlightView {
  const reference = highlight.references[0];
  const text = highlight.highlight.text;
  const whole: HighlightView = { source: reference?.source ?? null, before: "", marked: text, after: "", cutBefore: false, cutAfter: false };
  if (!reference) return whole;
  const field = Object.hasOwn(object, reference.source) ? object[reference.source] : undefined;
  const { start_char: start, end_char: end } = reference.position;
  if (typeof field !== "string" || !Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end < start || end > field.length || field.slice(start, end) !== text) return whole;
  let from = boundaryAtOrAfter(field, start - context);
  const space = field.slice(from, start).search(/\s/);
  if (from > 0 && space >= 0 && space < 24) from += space + 1;
  let to = boundaryAtOrBefore(field, end + context);
  const lastSpace = field.slice(end, to).search(/\s\S*$/);
  if (to < field.length && lastSpace >= 0 && to - (end + lastSpace) < 24) to = end + lastSpace;
  return { source: reference.source, before: field.slice(from, start), marked: text, after: field.slice(end, to), cutBefore: from > 0, cutAfter: to < field.length };
}

/** A value shown in a result: text cut to `max` code units at a character boundary (with whether it was cut). */
export function shortValue(value: unknown, max = 240): { text: string; cut: boolean } {
  const text = typeof value === "string" ? value : JSON.stringify(value) ?? String(value);
  if (text.length <= max) return { text, cut: false };
  return { text: text.slice(0, boundaryAtOrBefore(text, max)), cut: true };
}
