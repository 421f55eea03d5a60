import { describe, expect, it } from "vitest";
import { lexicalQuery } from "../../../src/engine/search/query-words.js";
import { DEFAULT_TOKENIZER } from "../../../src/engine/tokenizer.js";

describe("lexicalQuery", () => {
  it.each([
    ["how often should I oil my bicycle", "often oil bicycle"],
    ["What do I need for a flight?", "need flight"],
    ["keep my drinks hot", "keep drinks hot"],
    // words that name things stay
    ["can opener", "can opener"],
    ["down jacket for may", "down jacket may"],
    // nothing but question words: searched as it is
    ["what is it", "what is it"],
    ["trail shoes", "trail shoes"],
  ])("%j → %j", (query, expected) => {
    expect(lexicalQuery(query, DEFAULT_TOKENIZER)).toBe(expected);
  });
  it("leaves the query alone when the tokenizer keeps stop words, or is not English", () => {
    expect(lexicalQuery("how do I", { ...DEFAULT_TOKENIZER, stop_words: false })).toBe("how do I");
    expect(lexicalQuery("how my bike", { ...DEFAULT_TOKENIZER, language: "French" })).toBe("how my bike");
  });
});
