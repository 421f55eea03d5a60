import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, tempProject } from "../helpers/cli.js";

/** Ranking regression set: each query's expected best article among the bundled samples. */
const suite = JSON.parse(readFileSync(path.join(ROOT, "fixtures", "queries", "sample.json"), "utf8")) as {
  collection: string;
  /** `within`: how high the expected article must rank (default 1: first). */
  queries: { query: string; expected_top: string; within?: number }[];
};

// The worker runs built JavaScript, so the engine is taken from dist/ (`npm test` builds first).
type EngineModule = typeof import("../../src/engine/index.js");
const { Engine } = (await import(new URL("../../dist/engine/index.js", import.meta.url).href)) as EngineModule;
const engine = new Engine({ projectDir: tempProject() });
let indexId = "";

beforeAll(async () => {
  await engine.addObjects([{ text: readFileSync(path.join(ROOT, suite.collection), "utf8"), source: suite.collection }]);
  indexId = (await engine.createIndex({ configuration: { index_type: { name: "text" }, fields: { searchable: { allow: ["title", "body"] } } } })).id;
  await engine.waitForIndex(indexId);
});
afterAll(() => engine.close());

describe("ranking quality on the sample articles", () => {
  it.each(suite.queries)("$query → $expected_top", async ({ query, expected_top, within = 1 }) => {
    const page = await engine.search(indexId, { query, limit: within });
    expect(page.hits.map((hit) => hit.id)).toContain(expected_top);
  });

  it("vector search alone still finds paraphrases with no shared words", async () => {
    const page = await engine.search(indexId, { query: "dripping faucet", mode: "vector", limit: 3 });
    expect(page.hits.map((hit) => hit.id)).toContain("leaky-tap");
  });
});
