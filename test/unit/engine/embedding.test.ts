import { describe, expect, it } from "vitest";
import { BUNDLED_SPEC, loadModel } from "../../../src/engine/embedding/registry.js";

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] as number) * (b[i] as number);
  return dot;
}

const texts = ["Cats purr when they are content.", "Kittens are young cats.", "Interest rates rose again this year.", ""];

describe("bundled Universal Sentence Encoder", () => {
  it("gives unit vectors of 512 dimensions, the same alone or in a batch", async () => {
    const model = await loadModel(BUNDLED_SPEC);
    const batch = await model.embedTexts(texts);
    expect(batch).toHaveLength(texts.length);
    for (const vector of batch) {
      expect(vector).toHaveLength(512);
      expect(Math.sqrt(cosine(vector, vector))).toBeCloseTo(1, 4);
    }
    const [alone] = await model.embedTexts([texts[1] as string]);
    expect(cosine(alone as Float32Array, batch[1] as Float32Array)).toBeCloseTo(1, 5);
  });

  it("puts related sentences closer than unrelated ones", async () => {
    const [cats, kittens, rates] = await (await loadModel(BUNDLED_SPEC)).embedTexts(texts.slice(0, 3));
    expect(cosine(cats as Float32Array, kittens as Float32Array)).toBeGreaterThan(cosine(cats as Float32Array, rates as Float32Array) + 0.1);
  });
});

describe("embedding pool", () => {
  it("returns vectors in input order, equal to the in-thread model's", async () => {
    // Threads run built JavaScript: the pool is taken from dist/ (`npm test` builds first).
    const built = new URL("../../../dist/engine/embedding/pool.js", import.meta.url).href;
    const { createEmbeddingPool } = (await import(built)) as typeof import("../../../src/engine/embedding/pool.js");
    const pool = createEmbeddingPool(BUNDLED_SPEC, 2);
    try {
      const many = Array.from({ length: 20 }, (_, i) => `sentence number ${i} about ${i % 2 ? "dogs" : "markets"}`);
      const pooled = await pool.embed(many);
      const direct = await (await loadModel(BUNDLED_SPEC)).embedTexts(many);
      expect(pooled).toHaveLength(many.length);
      pooled.forEach((vector, i) => expect(cosine(vector, direct[i] as Float32Array)).toBeCloseTo(1, 5));
    } finally {
      await pool.close();
    }
  });
});
