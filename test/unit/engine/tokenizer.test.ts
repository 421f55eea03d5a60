import { describe, expect, it } from "vitest";
import { UnigramTokenizer } from "../../../src/engine/embedding/tokenizer.js";

// ids 0-5 are reserved control symbols, as in the real vocabulary
const vocabulary: [string, number][] = [
  ["<unk>", 0], ["<s>", 0], ["</s>", 0], ["<pad>", 0], ["<x>", 0], ["<y>", 0],
  ["▁", -5], ["▁the", -1], ["▁cat", -2], ["▁ca", -3], ["t", -4], ["s", -4], ["▁cats", -2.5],
];
const tokenizer = new UnigramTokenizer(vocabulary);

describe("UnigramTokenizer", () => {
  it("finds the highest-scoring split", () => {
    expect(tokenizer.encode("the cat")).toEqual([7, 8]);
    expect(tokenizer.encode("the cats")).toEqual([7, 12]);
  });
  it("maps symbols no piece covers to one unknown token per run", () => {
    expect(tokenizer.encode("the 😀😀 cat")).toEqual([7, 6, 0, 8]);
  });
  it("returns nothing for empty text", () => {
    expect(tokenizer.encode("")).toEqual([]);
  });
  it("normalises to NFKC first", () => {
    expect(tokenizer.encode("ｔｈｅ")).toEqual(tokenizer.encode("the"));
  });
});
