/**
 * Typo tolerance for the lexical part. Pure.
 *
 * A query word of 5 letters or more that matches no object, or far fewer than its close spellings
 * (isMisspelt), is matched fuzzily: within 1 edit, or 2 for words of 9 letters or more (the rule
 * Meilisearch and Typesense users know), the first letter kept. LanceDB compares a fuzzy word with
 * the words of its index as given, without its tokenizer's filters, so the word is put in the form
 * the index stores: lower-cased (typoCandidates), cut as its English stemmer cuts (roughStem), and
 * with accents folded (ascii-fold.ts). Words that match something are never expanded, so a query without typos ranks exactly as
 * before, and the fuzzy query (about 15-20 ms in LanceDB on 5,000 objects, measured) only runs for
 * queries that need it. Objects that match the query as written always rank above objects that
 * match only a corrected word: their scores are put below the lowest exact score.
 */
import type { ScoredRows } from "../store/rows.js";
import type { Tokenizer } from "../tokenizer.js";
import { foldToAscii } from "./ascii-fold.js";

export interface FuzzyWord {
  word: string;
  /** edits allowed: 1 or 2 */
  fuzziness: number;
}

/**
 * A word cut roughly as LanceDB's English stemmer cuts the words of the text (a plural `s`, `ing`,
 * `ed`, then a final `e`: "headphones" is stored as `headphon`). LanceDB compares a fuzzy word with
 * the stored stems without stemming it, so "headphnes" is 3 edits from `headphon` and `headphn` 1.
 */
export function roughStem(word: string): string {
  let stem = word;
  if (stem.endsWith("sses")) stem = stem.slice(0, -2);
  else if (stem.endsWith("ies")) stem = stem.slice(0, -2);
  else if (stem.endsWith("s") && !stem.endsWith("ss") && !stem.endsWith("us")) stem = stem.slice(0, -1);
  for (const suffix of ["ing", "ed"]) {
    if (stem.endsWith(suffix) && /[aeiouy]/.test(stem.slice(0, -suffix.length))) {
      stem = stem.slice(0, -suffix.length);
      break;
    }
  }
  if (stem.endsWith("e") && stem.length > 3) stem = stem.slice(0, -1);
  return stem.length >= 3 ? stem : word;
}

/**
 * The forms a misspelt word is matched fuzzily in, as the index stores words: itself, and its rough
 * stem when the index stems English; each with its accents folded when the index folds them (after
 * stemming, as LanceDB does).
 */
export function fuzzyForms(candidate: FuzzyWord, tokenizer: Pick<Tokenizer, "stem" | "language" | "ascii_folding">): FuzzyWord[] {
  const stemsEnglish = tokenizer.stem && tokenizer.language === "English";
  const stored = (word: string) => (tokenizer.ascii_folding ? foldToAscii(word) : word);
  const forms = new Set([stored(candidate.word), stored(stemsEnglish ? roughStem(candidate.word) : candidate.word)]);
  return [...forms].map((word) => ({ word, fuzziness: candidate.fuzziness }));
}

/** Stop words of 5 letters or more in LanceDB's English list: they match nothing because they are left out, not because they are misspelt. */
const LONG_STOP_WORDS = new Set(["their", "there", "these"]);

/** How many times more objects a word's close spellings must match than the word itself for it to count as misspelt. */
export const CLOSE_SPELLING_RATIO = 10;

/**
 * Whether a word that matches `found` objects is a misspelling, when the word and its close
 * spellings together match `near` (counted up to `found` × CLOSE_SPELLING_RATIO): it matches
 * nothing, or far fewer objects than they do ("recieve" in 1 object, "receive" in 40).
 */
export function isMisspelt(found: number, near: number): boolean {
  return found === 0 || near >= found * CLOSE_SPELLING_RATIO;
}

/** Edits a word may be off by: 0 under 5 letters, 1 from 5, 2 from 9. Digits do not count as letters. */
export function fuzzinessOf(word: string): number {
  const letters = [...word].filter((character) => /\p{L}/u.test(character)).length;
  return letters >= 9 ? 2 : letters >= 5 ? 1 : 0;
}

/** Words of a query looked into for typos at most (each is a look-up of its own): the first ones. */
export const MAX_TYPO_WORDS = 16;
/** Longest word looked into: longer ones are not words a person misspells (hashes, URLs, DNA). */
const MAX_TYPO_WORD_LENGTH = 40;

/** The query's distinct words that may be misspelt (lower-cased unless the index keeps case), each with its fuzziness: the first MAX_TYPO_WORDS. */
export function typoCandidates(query: string, lowercase = true): FuzzyWord[] {
  // (as the index keeps them: an index that keeps case would not find a capitalised word lower-cased)
  const words = new Set((lowercase ? query.toLowerCase() : query).split(/[^\p{L}\p{N}]+/u).filter((word) => word !== "" && word.length <= MAX_TYPO_WORD_LENGTH && !LONG_STOP_WORDS.has(word)));
  return [...words]
    .map((word) => ({ word, fuzziness: fuzzinessOf(word) }))
    .filter((candidate) => candidate.fuzziness > 0)
    .slice(0, MAX_TYPO_WORDS);
}

/**
 * How much a match of a corrected word counts against a match of the word as written: the fuzzy
 * matches' scores are put under this share of the lowest exact score, and without exact matches the
 * best fuzzy match counts this share of a full match in a hybrid ranking (ScoredRows.ceiling). A
 * correctly spelt word that no object has ("plane" in a collection of plants) is corrected too, and
 * should not outweigh the vector part's evidence.
 */
export const FUZZY_SHARE = 0.5;

/**
 * The exact matches, then the objects only the fuzzy query found, scored below FUZZY_SHARE of the
 * lowest exact score (in their own order) and cut at `limit`. Without exact matches, the fuzzy
 * matches as scored, with a ceiling that makes the best of them count FUZZY_SHARE.
 */
export function withFuzzyMatches(exact: ScoredRows, fuzzy: ScoredRows, limit: number): ScoredRows {
  if (fuzzy.ids.length === 0) return exact;
  if (exact.ids.length === 0) return { ...fuzzy, ceiling: (fuzzy.scores[0] ?? 0) / FUZZY_SHARE };
  const known = new Set(exact.ids);
  const extra: number[] = [];
  for (let i = 0; i < fuzzy.ids.length && exact.ids.length + extra.length < limit; i++) if (!known.has(fuzzy.ids[i] as string)) extra.push(i);
  if (extra.length === 0) return exact;
  let lowest = Infinity;
  for (const score of exact.scores) lowest = Math.min(lowest, score);
  let best = 0;
  for (const i of extra) best = Math.max(best, fuzzy.scores[i] as number);
  const ids = [...exact.ids, ...extra.map((i) => fuzzy.ids[i] as string)];
  const scores = new Float64Array(ids.length);
  scores.set(exact.scores);
  // (below the lowest exact score, keeping the fuzzy order: 0 < score < lowest)
  extra.forEach((i, k) => (scores[exact.ids.length + k] = (lowest * FUZZY_SHARE * (fuzzy.scores[i] as number)) / (best > 0 ? best : 1)));
  const rows = exact.rows && fuzzy.rows ? Float64Array.from([...exact.rows, ...extra.map((i) => (fuzzy.rows as Float64Array)[i] as number)]) : undefined;
  return rows ? { ids, scores, rows } : { ids, scores };
}
