/**
 * Where a JSON text stops being JSON, for errors about files that must not be quoted (state files,
 * model config files, objects add input). JSON.parse's message quotes the text around the fault
 * and varies between Node versions, and some messages carry no position, so a small validator
 * finds the offset itself. Pure and without imports: the embedding threads load it too.
 */

/** Where a fault is: the offset of the offending character. */
class Fault {
  constructor(readonly offset: number) {}
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);
const HEX = /[0-9a-fA-F]/;

function skipSpace(text: string, i: number): number {
  while (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r") i++;
  return i;
}

/** The end of the string starting at `i` (a `"`). A bad escape is faulted at the character after the backslash, as JSON.parse does. */
function stringEnd(text: string, i: number): number {
  for (i++; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22) return i + 1;
    if (code < 0x20) throw new Fault(i);
    if (code !== 0x5c) continue;
    const escape = text[i + 1] ?? "";
    if (escape === "u") {
      for (let k = i + 2; k < i + 6; k++) if (!HEX.test(text[k] ?? "")) throw new Fault(k);
      i += 5;
    } else if (ESCAPES.has(escape)) i++;
    else throw new Fault(i + 1);
  }
  throw new Fault(i);
}

/** The end of the string, number or literal starting at `i`. */
function scalarEnd(text: string, i: number): number {
  if (text[i] === '"') return stringEnd(text, i);
  for (const word of ["true", "false", "null"]) if (text.startsWith(word, i)) return i + word.length;
  NUMBER.lastIndex = i;
  if (NUMBER.test(text)) return NUMBER.lastIndex;
  throw new Fault(i);
}

/**
 * The containers open at a point, innermost last, one bit each (set: an object): a JSON array of
 * one element per level would cost 8 bytes a level, and V8 stops the process (uncatchably) past
 * about 130 million elements, which a 256 MB model file reaches.
 */
class OpenContainers {
  private bits = new Uint8Array(64);
  depth = 0;

  push(object: boolean): void {
    const byte = this.depth >> 3;
    if (byte === this.bits.length) {
      const grown = new Uint8Array(this.bits.length * 2);
      grown.set(this.bits);
      this.bits = grown;
    }
    const mask = 1 << (this.depth & 7);
    this.bits[byte] = object ? (this.bits[byte] as number) | mask : (this.bits[byte] as number) & ~mask;
    this.depth++;
  }

  /** The innermost container's closing bracket, or undefined at the top level. */
  close(): "}" | "]" | undefined {
    if (this.depth === 0) return undefined;
    const level = this.depth - 1;
    return ((this.bits[level >> 3] as number) >> (level & 7)) & 1 ? "}" : "]";
  }

  pop(): void {
    this.depth--;
  }
}

/** After an object's `{` or `,`: a key and its colon. */
function memberStart(text: string, i: number): number {
  if (text[i] !== '"') throw new Fault(i);
  i = skipSpace(text, stringEnd(text, i));
  if (text[i] !== ":") throw new Fault(i);
  return i + 1;
}

/**
 * The offset (UTF-16 code units) of the first character at which `text` stops being JSON (RFC 8259,
 * as JSON.parse reads it), `text.length` when it ends too early, or null when it is JSON.
 * Iterative: nesting depth costs no stack, and a bit of memory a level.
 */
export function jsonErrorOffset(text: string): number | null {
  const open = new OpenContainers();
  let i = 0;
  try {
    for (;;) {
      // A value starts here.
      i = skipSpace(text, i);
      const bracket = text[i];
      if (bracket === "{" || bracket === "[") {
        i = skipSpace(text, i + 1);
        if (text[i] !== (bracket === "{" ? "}" : "]")) {
          open.push(bracket === "{");
          if (bracket === "{") i = memberStart(text, i);
          continue;
        }
        i++;
      } else {
        i = scalarEnd(text, i);
      }
      // After a value: close what it ends, then the next value, or the end of the text.
      for (;;) {
        i = skipSpace(text, i);
        const close = open.close();
        if (close === undefined) {
          if (i < text.length) throw new Fault(i);
          return null;
        }
        if (text[i] === ",") {
          i = skipSpace(text, i + 1);
          if (close === "}") i = memberStart(text, i);
          break;
        }
        if (text[i] !== close) throw new Fault(i);
        open.pop();
        i++;
      }
    }
  } catch (error) {
    if (error instanceof Fault) return Math.min(error.offset, text.length);
    throw error;
  }
}

/**
 * Why a text that JSON.parse refused is not JSON, naming the place and never the text:
 * `not valid JSON (line 3, column 17)` (UTF-16 code units, from 1), `not valid JSON (it ends early,
 * at line 1)`, or `not valid JSON` should the validator find no fault.
 */
export function notJsonReason(text: string): string {
  const offset = jsonErrorOffset(text);
  if (offset === null) return "not valid JSON";
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return `not valid JSON (${offset >= text.length ? `it ends early, at line ${line}` : `line ${line}, column ${offset - lineStart + 1}`})`;
}
