/**
 * How an index's full-text part cuts text into words (`configuration.tokenizer`, a semsearch
 * extension). Pure. Chosen per index at creation and recorded in the catalog: LanceDB keeps the
 * settings in the full-text index itself, so an index keeps its tokenizer whatever the default
 * becomes later.
 *
 * The default was chosen with `npm run eval` (docs/performance.md, "Tokenizer"): stemming and
 * stop-word removal in English, lower-cased and ASCII-folded, which is also what LanceDB 0.31
 * does unasked. Without stemming, or without stop-word removal, nDCG@10 fell on every collection
 * but one; stemming alone lost 0.023 on CISI.
 */
/** The languages LanceDB's stemmers and stop-word lists know (any other name aborts the process inside LanceDB). */
export const TOKENIZER_LANGUAGES = ["Arabic", "Danish", "Dutch", "English", "Finnish", "French", "German", "Greek", "Hungarian", "Italian", "Norwegian", "Portuguese", "Romanian", "Russian", "Spanish", "Swedish", "Tamil", "Turkish"] as const;

export interface Tokenizer {
  /** reduce words to their stem (`running` → `run`) */
  stem: boolean;
  /** leave out the language's stop words (`the`, `of`…), in texts and queries alike */
  stop_words: boolean;
  /** fold accented letters to ASCII (`café` → `cafe`) */
  ascii_folding: boolean;
  lowercase: boolean;
  /** the language of the stemmer and the stop words */
  language: (typeof TOKENIZER_LANGUAGES)[number];
}

export const TOKENIZER_OPTIONS = ["stem", "stop_words", "ascii_folding", "lowercase", "language"] as const;

/** The default of new indexes, and what indexes created before tokenizers were recorded have. */
export const DEFAULT_TOKENIZER: Tokenizer = { stem: true, stop_words: true, ascii_folding: true, lowercase: true, language: "English" };

/** A configuration's tokenizer, the default filling what it leaves out. */
export function resolveTokenizer(given: Partial<Tokenizer> | undefined): Tokenizer {
  return { ...DEFAULT_TOKENIZER, ...given };
}

/** LanceDB's full-text index options (its FtsOptions) for a tokenizer; no word positions, so no phrase queries. */
export function ftsParams(tokenizer: Tokenizer) {
  return {
    withPosition: false,
    baseTokenizer: "simple" as const,
    stem: tokenizer.stem,
    removeStopWords: tokenizer.stop_words,
    asciiFolding: tokenizer.ascii_folding,
    lowercase: tokenizer.lowercase,
    language: tokenizer.language,
  };
}
