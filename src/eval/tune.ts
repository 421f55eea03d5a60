/**
 * `npm run eval -- --tune` helper: compares fusion strategies and weights on SciFact **train**
 * judgments only (never on the test split, Cranfield or CISI). It collects each query's lexical and
 * vector candidates once, with the exact cosine of every candidate, then fuses them offline.
 *
 *   node dist/eval/tune.js [--lexical-depth 1000]
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { EngineContext } from "../engine/context.js";
import { loadModel } from "../engine/embedding/registry.js";
import { indexTableName, Project } from "../engine/project.js";
import { compareRanked, type ScoredId } from "../engine/search/fuse.js";
import { VECTOR_CANDIDATES } from "../engine/search/limits.js";
import { loadCollection } from "./collections.js";
import { prepareIndex } from "./main.js";
import { meanMetrics, scoreQuery } from "./metrics.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

interface Parts {
  queryId: string;
  lexical: ScoredId[];
  vector: ScoredId[];
  /** exact cosine of every candidate of either part */
  cosine: Map<string, number>;
}

type Strategy = (parts: Parts, weight: number) => ScoredId[];

function rank(scores: Map<string, number>): ScoredId[] {
  return [...scores].map(([id, score]) => ({ id, score })).sort(compareRanked);
}

function byMax(items: ScoredId[]): Map<string, number> {
  const max = Math.max(0, ...items.map((i) => i.score));
  return new Map(items.map((i) => [i.id, max > 0 ? i.score / max : 0]));
}

const STRATEGIES: Record<string, Strategy> = {
  /** the engine's original fusion: vector min-max over its 250, absent = 0 */
  "minmax-250": (p, w) => {
    const lex = byMax(p.lexical);
    const cos = p.vector.map((v) => v.score);
    const min = Math.min(...cos);
    const range = Math.max(...cos) - min || 1;
    const scores = new Map<string, number>();
    for (const [id, s] of lex) scores.set(id, (1 - w) * s);
    for (const v of p.vector) scores.set(v.id, (scores.get(v.id) ?? 0) + w * ((v.score - min) / range));
    return rank(scores);
  },
  /** exact cosine for every candidate, min-max over all candidates */
  "minmax-all": (p, w) => {
    const lex = byMax(p.lexical);
    const values = [...p.cosine.values()];
    const min = Math.min(...values);
    const range = Math.max(...values) - min || 1;
    const scores = new Map<string, number>();
    for (const [id, c] of p.cosine) scores.set(id, (1 - w) * (lex.get(id) ?? 0) + w * ((c - min) / range));
    return rank(scores);
  },
  /** z-scores of both parts over the candidates */
  zscore: (p, w) => {
    const z = (values: Map<string, number>) => {
      const xs = [...values.values()];
      const mean = xs.reduce((a, b) => a + b, 0) / (xs.length || 1);
      const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length || 1)) || 1;
      return (x: number) => (x - mean) / sd;
    };
    const lexRaw = new Map(p.lexical.map((l) => [l.id, l.score]));
    const lexMin = Math.min(0, ...lexRaw.values());
    const full = new Map([...p.cosine.keys()].map((id) => [id, lexRaw.get(id) ?? lexMin]));
    const zl = z(full);
    const zc = z(p.cosine);
    const scores = new Map<string, number>();
    for (const [id, c] of p.cosine) scores.set(id, (1 - w) * zl(full.get(id) as number) + w * zc(c));
    return rank(scores);
  },
  /** reciprocal rank fusion (k = 60), weighted */
  rrf: (p, w) => {
    const scores = new Map<string, number>();
    p.lexical.forEach((l, i) => scores.set(l.id, (1 - w) / (60 + i + 1)));
    p.vector.forEach((v, i) => scores.set(v.id, (scores.get(v.id) ?? 0) + w / (60 + i + 1)));
    return rank(scores);
  },
};

async function collectParts(depth: number): Promise<Parts[]> {
  const evalDir = path.resolve(ROOT, "..", "shared", "eval");
  const collection = loadCollection("scifact-train", evalDir);
  const cacheDir = path.join(ROOT, ".cache", "eval");
  const { engine, indexId } = await prepareIndex(collection, cacheDir);
  await engine.close();
  const ctx = new EngineContext(new Project(path.join(cacheDir, "scifact")));
  const store = await ctx.store();
  const table = indexTableName(indexId);
  const model = await loadModel("use-lite-512");
  const parts: Parts[] = [];
  for (const query of collection.queries) {
    const [vector] = await model.embedTexts([query.text]);
    const [lexical, nearest] = await Promise.all([
      store.textSearch(table, query.text, depth),
      store.vectorSearch(table, vector as Float32Array, VECTOR_CANDIDATES),
    ]);
    const cosine = new Map(nearest.map((n) => [n.id, n.score]));
    const missing = lexical.map((l) => l.id).filter((id) => !cosine.has(id));
    for (const s of await store.similarities(table, vector as Float32Array, missing)) cosine.set(s.id, s.score);
    parts.push({ queryId: query.id, lexical, vector: nearest, cosine });
  }
  await ctx.close();
  return parts;
}

async function main() {
  const { values } = parseArgs({ options: { "lexical-depth": { type: "string", default: "1000" } } });
  const evalDir = path.resolve(ROOT, "..", "shared", "eval");
  const qrels = loadCollection("scifact-train", evalDir).qrels;
  const parts = await collectParts(Number(values["lexical-depth"]));
  const weights = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 1];
  process.stdout.write(`SciFact train, ${parts.length} queries, nDCG@10 (R@100)\nstrategy     ${weights.map((w) => String(w).padStart(12)).join("")}\n`);
  for (const [name, strategy] of Object.entries(STRATEGIES)) {
    const cells = weights.map((w) => {
      const m = meanMetrics(parts.map((p) => scoreQuery(strategy(p, w).map((s) => s.id), qrels.get(p.queryId) as Map<string, number>)));
      return `${m.ndcg10.toFixed(3)} (${m.recall100.toFixed(2)})`.padStart(12);
    });
    process.stdout.write(`${name.padEnd(12)} ${cells.join("")}\n`);
  }
}

await main();
