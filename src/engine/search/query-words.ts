/**
 * The words of a query the lexical part matches. Pure.
 *
 * LanceDB leaves out its stop words (33 English ones: `the`, `of`, `is`…) from texts and queries,
 * but not the pronouns, auxiliaries and question words that make up much of a question typed as
 * one: "how often should I oil my bicycle". In a small or short-texted collection those words are
 * rare enough to score like content words, so a note that only shares "my" with the query was the
 * best lexical match, and with the lexical scores scaled to the best one it outranked the note about
 * oiling a bicycle (fixtures/ranking, measured: docs/performance.md). So an index whose tokenizer
 * drops English stop words has these dropped from queries too. A query of nothing but such words
 * is left whole, and texts are indexed as before (no index changes).
 */
import type { Tokenizer } from "../tokenizer.js";

/** Function words of questions and requests; not words that name things (`can`, `may`, `will`, `down`, `over`…). */
const QUESTION_WORDS = new Set(
  (
    "i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself " +
    "it its itself they them their theirs themselves what which who whom whose this that these those " +
    "am is are was were be been being have has had having do does did doing " +
    "a an the and but if or because as until while of at by for with about to from in on into then than so " +
    "could would shall should how when where why there here just also something anything everything nothing someone anyone everyone"
  ).split(" "),
);

/** The query for the lexical part: without question words when the tokenizer drops English stop words. */
export function lexicalQuery(query: string, tokenizer: Tokenizer): string {
  if (!tokenizer.stop_words || tokenizer.language !== "English") return query;
  const words = query.split(/[^\p{L}\p{N}]+/u).filter((word) => word !== "");
  const content = words.filter((word) => !QUESTION_WORDS.has(word.toLowerCase()));
  return content.length === 0 || content.length === words.length ? query : content.join(" ");
}
