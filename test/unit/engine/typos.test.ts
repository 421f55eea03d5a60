import { describe, expect, it } from "vitest";
import { DEFAULT_TOKENIZER } from "../../../src/engine/tokenizer.js";
import { CLOSE_SPELLING_RATIO, FUZZY_SHARE, isMisspelt, MAX_TYPO_WORDS, fuzzinessOf, fuzzyForms, roughStem, typoCandidates, withFuzzyMatches } from "../../../src/engine/search/typos.js";

const rows = (ids: string[], scores: number[], withRows = false) => ({ ids, scores: Float64Array.from(scores), ...(withRows ? { rows: Float64Array.from(ids.map((_, i) => 100 + i)) } : {}) });

describe("fuzzinessOf", () => {
  it.each([
    ["shoe", 0],
    ["shoes", 1],
    ["headphnes", 2],
    ["cafés", 1],
    ["mp3s", 0],
    ["k2000", 0],
    ["ünterwäsche", 2],
  ])("%s: %i edits", (word, edits) => {
    expect(fuzzinessOf(word)).toBe(edits);
  });
});

describe("typoCandidates", () => {
  it("the distinct words of 5 letters or more, lower-cased, without long stop words", () => {
    expect(typoCandidates("Headphnes for THERE flights, headphnes! a bicycle-helmet")).toEqual([
      { word: "headphnes", fuzziness: 2 },
      { word: "flights", fuzziness: 1 },
      { word: "bicycle", fuzziness: 1 },
      { word: "helmet", fuzziness: 1 },
    ]);
    expect(typoCandidates("tea for two")).toEqual([]);
    // an index that keeps case looks words up as written
    expect(typoCandidates("Paris paris", false)).toEqual([{ word: "Paris", fuzziness: 1 }, { word: "paris", fuzziness: 1 }]);
    // at most MAX_TYPO_WORDS, and no word longer than 40 characters
    const many = Array.from({ length: 100 }, (_, i) => `wordy${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`).join(" ");
    expect(typoCandidates(many)).toHaveLength(MAX_TYPO_WORDS);
    expect(typoCandidates("a".repeat(41))).toEqual([]);
  });
});

describe("withFuzzyMatches", () => {
  it("keeps every exact match first, as scored, then the fuzzy-only matches below the lowest exact score, in their order", () => {
    const merged = withFuzzyMatches(rows(["a", "b"], [5, 2], true), rows(["c", "a", "d"], [9, 8, 3], true), 10);
    expect(merged.ids).toEqual(["a", "b", "c", "d"]);
    expect([...merged.scores.slice(0, 2)]).toEqual([5, 2]);
    expect(merged.scores[2]).toBeLessThan(2);
    expect(merged.scores[3]).toBeLessThan(merged.scores[2] as number);
    expect(merged.scores[3]).toBeGreaterThan(0);
    expect([...(merged.rows ?? [])]).toEqual([100, 101, 100, 102]);
  });
  it("puts fuzzy-only matches under FUZZY_SHARE of the lowest exact score", () => {
    const merged = withFuzzyMatches(rows(["a"], [4]), rows(["c"], [100]), 10);
    expect(merged.scores[1]).toBeCloseTo(4 * FUZZY_SHARE, 9);
  });
  it("without exact matches gives the fuzzy ones as scored, with a ceiling making the best count FUZZY_SHARE; without fuzzy ones, the exact ones", () => {
    const fuzzy = rows(["c", "d"], [4, 2]);
    expect(withFuzzyMatches(rows([], []), fuzzy, 10)).toEqual({ ...fuzzy, ceiling: 4 / FUZZY_SHARE });
    const exact = rows(["a"], [1]);
    expect(withFuzzyMatches(exact, rows([], []), 10)).toBe(exact);
    expect(withFuzzyMatches(exact, rows(["a"], [3]), 10)).toBe(exact);
  });
  it("stops at the limit", () => {
    expect(withFuzzyMatches(rows(["a", "b"], [2, 1]), rows(["c", "d", "e"], [3, 2, 1]), 3).ids).toEqual(["a", "b", "c"]);
  });
});

describe("roughStem and fuzzyForms", () => {
  it.each([
    ["headphnes", "headphn"],
    ["headphones", "headphon"],
    ["runing", "run"],
    ["glasses", "glass"],
    ["batteries", "batteri"],
    ["coffe", "coff"],
    ["focus", "focus"],
    ["sing", "sing"],
  ])("%s → %s", (word, stem) => {
    expect(roughStem(word)).toBe(stem);
  });
  it("matches a misspelt word as written and by its rough stem when the index stems English", () => {
    expect(fuzzyForms({ word: "headphnes", fuzziness: 2 }, DEFAULT_TOKENIZER)).toEqual([{ word: "headphnes", fuzziness: 2 }, { word: "headphn", fuzziness: 2 }]);
    expect(fuzzyForms({ word: "headphnes", fuzziness: 2 }, { ...DEFAULT_TOKENIZER, stem: false })).toEqual([{ word: "headphnes", fuzziness: 2 }]);
    expect(fuzzyForms({ word: "headphnes", fuzziness: 2 }, { ...DEFAULT_TOKENIZER, language: "German" })).toEqual([{ word: "headphnes", fuzziness: 2 }]);
  });
  // LanceDB compares a fuzzy word with its index's words as given, and those are folded: an accent
  // spent one of the word's edits (`éclairgae` was 3 from the stored `eclairag`)
  it.each([
    ["éclairgae", ["eclairgae", "eclairga"]],
    ["überraschugn", ["uberraschugn"]],
    ["straßenbahnen", ["strassenbahnen"]],
    ["ǽsthetics", ["aesthetics", "aesthetic"]],
    ["москвы", ["москвы"]],
  ])("folds the accents of %s when the index folds them", (word, forms) => {
    const candidate = { word, fuzziness: fuzzinessOf(word) };
    expect(fuzzyForms(candidate, DEFAULT_TOKENIZER).map((form) => form.word)).toEqual(forms);
    expect(fuzzyForms(candidate, { ...DEFAULT_TOKENIZER, stem: false, ascii_folding: false }).map((form) => form.word)).toEqual([word]);
    // (the edits allowed are counted on the word as typed: 9 letters, 2 edits, for `éclairgae`)
    expect(fuzzyForms(candidate, DEFAULT_TOKENIZER).every((form) => form.fuzziness === candidate.fuzziness)).toBe(true);
  });
});

describe("isMisspelt", () => {
  it("a word that matches nothing, or far fewer objects than its close spellings do", () => {
    expect(isMisspelt(0, 0)).toBe(true);
    expect(isMisspelt(1, CLOSE_SPELLING_RATIO)).toBe(true);
    expect(isMisspelt(1, CLOSE_SPELLING_RATIO - 1)).toBe(false);
    expect(isMisspelt(2, 2 * CLOSE_SPELLING_RATIO)).toBe(true);
    expect(isMisspelt(2, 5)).toBe(false);
  });
});
