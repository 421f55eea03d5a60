/**
 * Text highlights (spec §2.4, §2.6, §4.3 rules 1-2). Pure: grouping the best segments by object,
 * combining adjacent or overlapping segments of a field, and ranking objects by their best highlight.
 */
import { compareRanked, type ScoredId } from "./fuse.js";

/** Highlights a search returns at most (rule 1). */
export const MAX_HIGHLIGHTS = 250;

/**
 * Of the segment candidates, the ones relevant enough to show: scores in the upper half of the
 * candidates' score range. Vector search always returns neighbours, relevant or not; without a cut a
 * small collection would highlight every segment (and combine them into whole fields).
 */
export const HIGHLIGHT_RELATIVE_CUTOFF = 0.5;

export function relevantSegments<T extends { score: number }>(candidates: readonly T[]): T[] {
  if (candidates.length === 0) return [];
  const scores = candidates.map((c) => c.score);
  const max = Math.max(...scores);
  const min = Math.min(...scores);
  const cut = min + (max - min) * HIGHLIGHT_RELATIVE_CUTOFF;
  return candidates.filter((c) => c.score >= cut);
}

/** One matching segment. `position` is its index among the field's segments. */
export interface SegmentHit {
  objectId: string;
  field: string;
  position: number;
  start: number;
  end: number;
  score: number;
}

/** A highlight before its text is cut from the object: a span of one field. */
export interface HighlightSpan {
  field: string;
  start: number;
  end: number;
  score: number;
}

/** Spec §2.6 text highlight. */
export interface TextHighlight {
  highlight_type: "text";
  references: { source: string; position: { start_char: number; end_char: number } }[];
  highlight: { text: string };
}

/** Spec §2.6 image highlight: the image as stored in the object. */
export interface ImageHighlight {
  reference_type: "image";
  media_identifier: string;
}

export type Highlight = TextHighlight | ImageHighlight;

/** An image of an object with its similarity to the query. */
export interface ImageHit {
  objectId: string;
  position: number;
  identifier: string;
  score: number;
}

/**
 * The image highlights of a page of an image index: each result's images, best first, in page order,
 * at most `budget` in all (rule 1's limit, shared with text highlights).
 */
export function imageHighlights(pageIds: readonly string[], hits: readonly ImageHit[], budget = MAX_HIGHLIGHTS): Map<string, ImageHighlight[]> {
  const byObject = new Map<string, ImageHit[]>();
  for (const hit of hits) {
    let group = byObject.get(hit.objectId);
    if (!group) byObject.set(hit.objectId, (group = []));
    group.push(hit);
  }
  const out = new Map<string, ImageHighlight[]>();
  let left = budget;
  for (const id of pageIds) {
    const images = (byObject.get(id) ?? []).sort((a, b) => b.score - a.score || a.position - b.position).slice(0, Math.max(0, left));
    left -= images.length;
    out.set(id, images.map((image) => ({ reference_type: "image", media_identifier: image.identifier })));
  }
  return out;
}

/** Segments grouped by object, in no particular order. */
export function groupByObject(hits: readonly SegmentHit[]): Map<string, SegmentHit[]> {
  const groups = new Map<string, SegmentHit[]>();
  for (const hit of hits) {
    let group = groups.get(hit.objectId);
    if (!group) groups.set(hit.objectId, (group = []));
    group.push(hit);
  }
  return groups;
}

/**
 * Combines segments of one object that are neighbours in the same field (consecutive positions)
 * or overlap, into single spans (§2.4.6). A span scores its best segment. Best first.
 */
export function combineSegments(segments: readonly SegmentHit[]): HighlightSpan[] {
  const sorted = [...segments].sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : a.position - b.position));
  const spans: (HighlightSpan & { last: number })[] = [];
  for (const segment of sorted) {
    const previous = spans.at(-1);
    if (previous && previous.field === segment.field && (segment.position <= previous.last + 1 || segment.start <= previous.end)) {
      previous.end = Math.max(previous.end, segment.end);
      previous.start = Math.min(previous.start, segment.start);
      previous.score = Math.max(previous.score, segment.score);
      previous.last = Math.max(previous.last, segment.position);
    } else {
      spans.push({ field: segment.field, start: segment.start, end: segment.end, score: segment.score, last: segment.position });
    }
  }
  return spans
    .map(({ field, start, end, score }) => ({ field, start, end, score }))
    .sort((a, b) => b.score - a.score || (a.field < b.field ? -1 : a.field > b.field ? 1 : a.start - b.start));
}

/**
 * Objects ranked by their best highlight (rule 2), then every other result of the regular ranking
 * in its own order, so paging still reaches every result exactly once.
 */
export function rankByHighlights(groups: ReadonlyMap<string, readonly SegmentHit[]>, regular: readonly ScoredId[]): ScoredId[] {
  const highlighted = [...groups].map(([id, hits]) => ({ id, score: Math.max(...hits.map((hit) => hit.score)) })).sort(compareRanked);
  const seen = new Set(highlighted.map((item) => item.id));
  return [...highlighted, ...regular.filter((item) => !seen.has(item.id))];
}

/** The spec's highlight object; the text is cut from the stored field, so it always equals the slice. */
export function toTextHighlight(span: HighlightSpan, fieldText: string): TextHighlight {
  return {
    highlight_type: "text",
    references: [{ source: span.field, position: { start_char: span.start, end_char: span.end } }],
    highlight: { text: fieldText.slice(span.start, span.end) },
  };
}
