/**
 * Text that may not be what its sender had: U+FFFD, which a lenient UTF-8 decoder puts where bytes
 * were not UTF-8 (Node reads the command line and the environment so, and keeps no trace of the
 * bytes), and halves of characters (lone surrogates, which UTF-8 cannot carry: each is written out
 * as U+FFFD). An id, a name, a path or a filter holding either, read from such a place, may name
 * something else: `keep\xff` on a command line arrives as `keep\uFFFD` and would delete the object
 * stored under that id. Pure.
 *
 * Where bytes are decoded strictly (standard input, files, HTTP bodies and percent-encoded paths), a
 * U+FFFD was sent as such and means itself; this rule is for the places that cannot tell.
 */
import { ValidationError } from "./errors.js";

const REPLACED = /[\uFFFD\p{Cs}]/u;

/** The UTF-16 index of the first U+FFFD or lone surrogate of `text`, or -1. */
export function replacedCharacterAt(text: string): number {
  const match = REPLACED.exec(text);
  return match ? match.index : -1;
}

/** `text` quoted for a message: at most 200 characters, U+FFFD and lone surrogates written as `\u` escapes so that they can be seen. */
export function shownWithEscapes(text: string): string {
  const cut = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return JSON.stringify(cut).replace(/[\uFFFD\p{Cs}]/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * Refuses `text` when it holds U+FFFD or a lone surrogate (ValidationError ARGUMENT_NOT_UTF8, exit 4,
 * 422). `what` names it for the message (`the argument ids of objects delete`, `--filter`).
 */
export function refuseReplacedText(text: string, what: string, hint: string): void {
  const at = replacedCharacterAt(text);
  if (at === -1) return;
  const unit = text.charCodeAt(at);
  const found = unit === 0xfffd ? "U+FFFD" : `half of a character (U+${unit.toString(16).toUpperCase()} without its pair)`;
  const character = [...text.slice(0, at)].length + 1;
  const message = `holds ${found} at character ${character}: bytes that are not UTF-8 become U+FFFD on a command line, so it may not be what was typed`;
  throw new ValidationError("ARGUMENT_NOT_UTF8", `${what} ${shownWithEscapes(text)} ${message}`, { hint, issues: [{ path: what, message }] });
}
