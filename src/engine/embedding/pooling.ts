/**
 * Turning a model's token vectors into one vector per text, and long texts into windows. Pure.
 *
 * A text longer than the model's window is never cut: its tokens are split into consecutive
 * windows (each wrapped in the model's special tokens), every window is embedded, and the text's
 * vector is the mean of the window vectors weighted by their token counts, scaled to unit length.
 */
import type { Pooling } from "./model-spec.js";
import { normalise } from "./provider.js";

/** The special tokens a tokenizer wraps every sequence in (e.g. `[CLS]` … `[SEP]`). */
export interface Wrapping {
  prefix: readonly number[];
  suffix: readonly number[];
}

/**
 * The special tokens around a text: found by encoding a probe text with and without them, and
 * locating the plain ids inside the wrapped ones. Throws when they do not nest that way.
 */
export function findWrapping(plain: readonly number[], wrapped: readonly number[]): Wrapping {
  for (let start = 0; start + plain.length <= wrapped.length; start++) {
    if (plain.every((id, i) => wrapped[start + i] === id)) {
      return { prefix: wrapped.slice(0, start), suffix: wrapped.slice(start + plain.length) };
    }
  }
  throw new Error("the tokenizer's special tokens do not wrap the text");
}

/** One model input: a window of a text's tokens, wrapped. */
export interface TokenWindow {
  /** Index of the text it belongs to. */
  text: number;
  ids: number[];
  /** Content tokens in it (the weight of its vector). */
  tokens: number;
}

/**
 * Splits each text's token ids into windows of at most `window` ids including the wrapping. An
 * empty text gets one window of only the special tokens.
 */
export function splitWindows(texts: readonly (readonly number[])[], window: number, wrapping: Wrapping): TokenWindow[] {
  const room = window - wrapping.prefix.length - wrapping.suffix.length;
  if (room < 1) throw new Error(`a window of ${window} tokens leaves no room for text`);
  const out: TokenWindow[] = [];
  texts.forEach((ids, text) => {
    for (let start = 0; start < ids.length || start === 0; start += room) {
      const content = ids.slice(start, start + room);
      out.push({ text, ids: [...wrapping.prefix, ...content, ...wrapping.suffix], tokens: Math.max(1, content.length) });
      if (ids.length === 0) break;
    }
  });
  return out;
}

/**
 * Pools the token vectors of one sequence: `hidden` holds `length` rows of `dimension` values
 * (padding rows after them are ignored). Mean over the real tokens, or the first token's vector.
 */
export function poolTokens(hidden: Float32Array, length: number, dimension: number, pooling: Pooling): Float32Array {
  if (pooling === "cls") return Float32Array.from(hidden.subarray(0, dimension));
  const out = new Float32Array(dimension);
  for (let t = 0; t < length; t++) {
    const row = t * dimension;
    for (let d = 0; d < dimension; d++) out[d] = (out[d] as number) + (hidden[row + d] as number);
  }
  for (let d = 0; d < dimension; d++) out[d] = (out[d] as number) / Math.max(1, length);
  return out;
}

/** Combines window vectors into one vector per text: the token-weighted mean, unit length when asked. */
export function combineWindows(windows: readonly TokenWindow[], vectors: readonly Float32Array[], texts: number, normalize: boolean): Float32Array[] {
  const dimension = vectors[0]?.length ?? 0;
  const sums = Array.from({ length: texts }, () => new Float32Array(dimension));
  const weights = new Float64Array(texts);
  windows.forEach((window, i) => {
    const vector = vectors[i] as Float32Array;
    // Each window counts once it is unit length, so a long window does not outweigh by its norm alone.
    const unit = normalize ? normalise(Float32Array.from(vector)) : vector;
    const sum = sums[window.text] as Float32Array;
    for (let d = 0; d < dimension; d++) sum[d] = (sum[d] as number) + (unit[d] as number) * window.tokens;
    weights[window.text] = (weights[window.text] as number) + window.tokens;
  });
  return sums.map((sum, text) => {
    const weight = weights[text] as number;
    for (let d = 0; d < dimension; d++) sum[d] = (sum[d] as number) / (weight || 1);
    return normalize ? normalise(sum) : sum;
  });
}

/**
 * Splits a text into consecutive windows of at most `size` characters, each cut at the last space
 * (or line break) in its second half, or at `size` when there is none. Nothing is dropped: joined,
 * the windows are the text.
 */
export function charWindows(text: string, size: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (text.length - start > size) {
    let end = start + size;
    // The last space or line break inside the window (the window may end just after it), looked for
    // in the window only: from its end back to the text's start, a text without line breaks cost
    // time in the square of its length.
    const window = text.slice(start, end);
    const space = Math.max(window.lastIndexOf(" "), window.lastIndexOf("\n"));
    if (space > size / 2) end = start + space + 1;
    // Never split a surrogate pair (unless the window has room for nothing else).
    else if (/[\uD800-\uDBFF]/.test(text[end - 1] ?? "") && end - 1 > start) end--;
    out.push(text.slice(start, end));
    start = end;
  }
  out.push(text.slice(start));
  return out;
}
