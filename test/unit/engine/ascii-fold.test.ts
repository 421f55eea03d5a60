/**
 * foldToAscii against LanceDB itself: every letter of the Latin blocks (and a few others) is indexed
 * by a real LanceDB full-text index with semsearch's folding, and the folded word must be the one the
 * index stored, or a fuzzy query (which LanceDB does not fold) misses it.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { foldToAscii } from "../../../src/engine/search/ascii-fold.js";
import { DEFAULT_TOKENIZER, ftsParams } from "../../../src/engine/tokenizer.js";

/** Latin-1, Latin Extended A and B, IPA, Latin Extended Additional, C and D, the Latin ligatures, full-width Latin, Greek, Cyrillic. */
const BLOCKS = [[0xa0, 0x2af], [0x1e00, 0x1eff], [0x2c60, 0x2c7f], [0xa720, 0xa7ff], [0xfb00, 0xfb06], [0xff21, 0xff5a], [0x370, 0x3ff], [0x400, 0x45f]] as const;
/** Letters whose stored form differs: `İ` (lower-cased to `i` and a combining dot), and two modifier letters. */
const UNLIKE = new Set(["İ", "ꟸ", "ͺ"]);

describe("foldToAscii", () => {
  it.each([
    ["éclairgae", "eclairgae"],
    ["überraschung", "uberraschung"],
    ["straße", "strasse"],
    ["ǽ", "ae"],
    ["Ørsted", "Orsted"],
    ["ﬁne", "fine"],
    ["ｗｉｄｅ", "wide"],
    ["москва", "москва"],
    ["plain", "plain"],
    ["日本語", "日本語"],
  ])("%s → %s", (word, folded) => {
    expect(foldToAscii(word)).toBe(folded);
  });

  it("gives each letter the form LanceDB's folding index stores it in", async () => {
    const lancedb = await import("@lancedb/lancedb");
    const letters: string[] = [];
    for (const [from, to] of BLOCKS) {
      for (let code = from; code <= to; code++) {
        const letter = String.fromCodePoint(code);
        if (/\p{L}/u.test(letter) && !UNLIKE.has(letter)) letters.push(letter);
      }
    }
    const db = await lancedb.connect(mkdtempSync(path.join(tmpdir(), "semsearch-fold-")));
    const table = await db.createTable("t", letters.map((letter, i) => ({ id: String(i), text: `zz${letter}zz` })));
    // (semsearch's index settings, without stemming or stop words: the word is kept whole)
    await table.createIndex("text", { config: lancedb.Index.fts({ ...ftsParams({ ...DEFAULT_TOKENIZER, stem: false, stop_words: false }) }) });
    const { BooleanQuery, MatchQuery, Occur } = lancedb;
    const differing: string[] = [];
    for (const [i, letter] of letters.entries()) {
      const word = `zz${foldToAscii(letter.toLowerCase())}zz`;
      // A fuzzy query, as typo look-ups make, with the whole word as its prefix: only the stored word itself (or one a letter longer) matches.
      const query = new BooleanQuery([[Occur.Should, new MatchQuery(word, "text", { fuzziness: 1, maxExpansions: 50, prefixLength: Buffer.byteLength(word) })]]);
      const rows = (await table.query().fullTextSearch(query, { columns: "text" }).select(["id", "_score"]).limit(letters.length).toArray()) as { id: string }[];
      if (!rows.some((row) => row.id === String(i))) differing.push(`${letter} (U+${letter.codePointAt(0)?.toString(16)}) folded to ${foldToAscii(letter.toLowerCase())}`);
    }
    expect(differing).toEqual([]);
    expect(letters.length).toBeGreaterThan(1000);
  });
});
