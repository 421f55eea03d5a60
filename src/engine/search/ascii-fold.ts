/**
 * Folding accented Latin letters to ASCII as LanceDB's full-text index does (its `asciiFolding`,
 * tantivy's AsciiFoldingFilter: `é` → `e`, `ß` → `ss`). Pure.
 *
 * LanceDB folds the words of texts and of plain queries, but a fuzzy query (a MatchQuery with
 * fuzziness) is compared with the index's words as given: `éclairgae` was 3 edits from the stored
 * `eclairag`, the accent spending one of its 2. So typo look-ups fold their words here first
 * (typos.ts). A letter is folded when its compatibility decomposition, marks left out, is ASCII
 * letters or digits (with the few letters that have no decomposition, FOLDED); any other letter is
 * kept as it is, as LanceDB keeps Greek, Cyrillic or CJK. Checked against LanceDB letter by letter
 * over the Latin blocks (test/unit/engine/ascii-fold.test.ts).
 */

/** Lower-case letters without a decomposition that LanceDB folds, and what to. */
const FOLDED = new Map(Object.entries({ ß: "ss", æ: "ae", œ: "oe", ø: "o", đ: "d", ð: "d", þ: "th", ł: "l", ħ: "h", ı: "i", ĸ: "k", ŀ: "l", ŉ: "n", ŋ: "n", ŧ: "t", ẚ: "a" }));

const ASCII_WORD = /^[a-z0-9]+$/i;
const MARKS = /\p{M}/gu;

function foldLetter(letter: string): string {
  const special = FOLDED.get(letter.toLowerCase());
  if (special) return letter === letter.toLowerCase() ? special : special.toUpperCase();
  // (`ǽ` decomposes to `æ` and a mark: its base letter is folded in turn)
  const base = [...letter.normalize("NFKD").replace(MARKS, "")].map((part) => FOLDED.get(part) ?? part).join("");
  return ASCII_WORD.test(base) ? base : letter;
}

/** `text` with its accented Latin letters folded to ASCII, the way LanceDB folds a word it indexes. */
export function foldToAscii(text: string): string {
  if (!/[^\u0000-\u007f]/.test(text)) return text;
  let out = "";
  for (const character of text) out += character < "\u0080" ? character : foldLetter(character);
  return out;
}
