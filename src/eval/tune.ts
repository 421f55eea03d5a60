/**
 * `npm run eval -- --tune` helper: compares fusion strategies and weights on SciFact **train**
 * judgments only (never on the test split, Cranfield or CISI). It collects each query's lexical and
 * vector candidates once, with the exact cosine of every candidate, then fuses them offline.
 *
 *   node dist/eval/tune.js [--lexical-depth 1000] [--segments]
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { EngineContext } from "../engine/context.js";
import { createEmbeddingPool } from "../engine/embedding/pool.js";
import { BUNDLED_SPEC, loadModel } from "../engine/embedding/registry.js";
import { segmentText } from "../engine/indexing/segment.js";
import { indexTableName, Project } from "../engine/project.js";
import { compareRanked, type ScoredId } from "../engine/search/fuse.js";
import { scoredIds } from "../engine/store/rows.js";
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
  /** with --segments: the 250 objects with the best segment (max over segments), and that max for every candidate */
  segmentNearest?: ScoredId[];
  maxSim?: Map<string, number>;
  /** with --prf: the query vector */
  query?: Float32Array;
}

/** Every document vector of the index, for pseudo-relevance feedback experiments. */
let docVectors: Map<string, Float32Array> | null = null;

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}

/** Rocchio in embedding space: the query moved towards the mean of its top-k lexical matches. */
function prfStrategy(k: number, beta: number): Strategy {
  return (p, w) => {
    if (!p.query || !docVectors) return [];
    const moved = Float32Array.from(p.query);
    const top = p.lexical.slice(0, k).map((l) => docVectors?.get(l.id)).filter((v): v is Float32Array => v !== undefined);
    for (const v of top) for (let i = 0; i < moved.length; i++) moved[i] = (moved[i] as number) + (beta * (v[i] as number)) / top.length;
    const norm = Math.sqrt(dot(moved, moved)) || 1;
    const candidates = new Set([...p.lexical.slice(0, 1000).map((l) => l.id), ...p.vector.map((v) => v.id)]);
    const cos = new Map([...candidates].map((id) => [id, dot(moved, docVectors?.get(id) ?? moved) / norm]));
    const values = [...cos.values()];
    const min = Math.min(...values);
    const range = Math.max(...values) - min || 1;
    const lex = byMax(p.lexical);
    const scores = new Map<string, number>();
    for (const l of p.lexical) scores.set(l.id, (1 - w) * (lex.get(l.id) ?? 0));
    for (const [id, c] of cos) scores.set(id, (scores.get(id) ?? 0) + w * ((c - min) / range));
    return rank(scores);
  };
}

interface SegmentVectors {
  owner: string[];
  vectors: Float32Array;
}

/** Vectors of every segment of every SciFact document (default segmentation), cached. */
async function segmentVectors(documents: { id: string; title: string; text: string }[], cacheDir: string): Promise<SegmentVectors> {
  const file = path.join(cacheDir, "scifact-segments.f32");
  const ownersFile = path.join(cacheDir, "scifact-segments.json");
  if (existsSync(file) && existsSync(ownersFile)) {
    const buffer = readFileSync(file);
    return { owner: JSON.parse(readFileSync(ownersFile, "utf8")), vectors: new Float32Array(buffer.buffer, buffer.byteOffset, buffer.byteLength / 4) };
  }
  const owner: string[] = [];
  const texts: string[] = [];
  for (const doc of documents) {
    for (const segment of segmentText(`${doc.title}\n${doc.text}`)) {
      owner.push(doc.id);
      texts.push(segment.text);
    }
  }
  process.stderr.write(`embedding ${texts.length} segments of ${documents.length} documents (cached)…\n`);
  const pool = createEmbeddingPool(BUNDLED_SPEC);
  const start = performance.now();
  const rows = await pool.embed(texts);
  await pool.close();
  process.stderr.write(`  ${(texts.length / ((performance.now() - start) / 1000)).toFixed(1)} segments/s\n`);
  const vectors = new Float32Array(rows.length * 512);
  rows.forEach((r, i) => vectors.set(r, i * 512));
  writeFileSync(file, Buffer.from(vectors.buffer));
  writeFileSync(ownersFile, JSON.stringify(owner));
  return { owner, vectors };
}

function maxSimAll(q: Float32Array, seg: SegmentVectors): Map<string, number> {
  const best = new Map<string, number>();
  for (let i = 0; i < seg.owner.length; i++) {
    let dot = 0;
    const base = i * 512;
    for (let j = 0; j < 512; j++) dot += (q[j] as number) * (seg.vectors[base + j] as number);
    const id = seg.owner[i] as string;
    if (dot > (best.get(id) ?? -Infinity)) best.set(id, dot);
  }
  return best;
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
  /** max over segments instead of one vector per document, min-max over candidates */
  "maxsim-all": (p, w) => {
    if (!p.maxSim || !p.segmentNearest) return [];
    const lex = byMax(p.lexical);
    const candidates = new Set([...p.lexical.slice(0, 1000).map((l) => l.id), ...p.segmentNearest.map((n) => n.id)]);
    const values = [...candidates].map((id) => p.maxSim?.get(id) ?? 0);
    const min = Math.min(...values);
    const range = Math.max(...values) - min || 1;
    const scores = new Map<string, number>();
    for (const l of p.lexical) scores.set(l.id, (1 - w) * (lex.get(l.id) ?? 0));
    for (const id of candidates) scores.set(id, (scores.get(id) ?? 0) + w * (((p.maxSim.get(id) ?? min) - min) / range));
    return rank(scores);
  },
  /** mean of the document cosine and the best segment */
  "blend-all": (p, w) => {
    if (!p.maxSim || !p.segmentNearest) return [];
    const lex = byMax(p.lexical);
    const candidates = new Set([...p.cosine.keys(), ...p.segmentNearest.map((n) => n.id)]);
    const blended = new Map([...candidates].map((id) => [id, ((p.cosine.get(id) ?? 0) + (p.maxSim?.get(id) ?? 0)) / 2]));
    const values = [...blended.values()];
    const min = Math.min(...values);
    const range = Math.max(...values) - min || 1;
    const scores = new Map<string, number>();
    for (const l of p.lexical) scores.set(l.id, (1 - w) * (lex.get(l.id) ?? 0));
    for (const [id, c] of blended) scores.set(id, (scores.get(id) ?? 0) + w * ((c - min) / range));
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

async function collectParts(depth: number, withSegments: boolean): Promise<Parts[]> {
  const evalDir = path.resolve(ROOT, "..", "shared", "eval");
  const collection = loadCollection("scifact-train", evalDir);
  const cacheDir = path.join(ROOT, ".cache", "eval");
  const { engine, indexId } = await prepareIndex(collection, cacheDir);
  await engine.close();
  const ctx = new EngineContext(new Project(path.join(cacheDir, "scifact")));
  const store = await ctx.store();
  const table = indexTableName(indexId);
  const model = await loadModel(BUNDLED_SPEC);
  const segments = withSegments ? await segmentVectors(collection.documents, cacheDir) : null;
  docVectors = await store.allVectors(table);
  const parts: Parts[] = [];
  for (const query of collection.queries) {
    const [vector] = await model.embedTexts([query.text]);
    const [lexical, nearest] = (
      await Promise.all([store.textSearch(table, query.text, depth), store.vectorSearch(table, vector as Float32Array, VECTOR_CANDIDATES)])
    ).map(scoredIds) as [ScoredId[], ScoredId[]];
    const cosine = new Map(nearest.map((n) => [n.id, n.score]));
    const missing = lexical.map((l) => l.id).filter((id) => !cosine.has(id));
    for (const s of await store.similarities(table, vector as Float32Array, missing)) cosine.set(s.id, s.score);
    const part: Parts = { queryId: query.id, lexical, vector: nearest, cosine, query: vector as Float32Array };
    if (segments) {
      const all = maxSimAll(vector as Float32Array, segments);
      part.segmentNearest = [...all].map(([id, score]) => ({ id, score })).sort(compareRanked).slice(0, VECTOR_CANDIDATES);
      part.maxSim = all;
    }
    parts.push(part);
  }
  await ctx.close();
  return parts;
}

async function main() {
  const { values } = parseArgs({
    options: { "lexical-depth": { type: "string", default: "1000" }, segments: { type: "boolean", default: false } },
  });
  const evalDir = path.resolve(ROOT, "..", "shared", "eval");
  const qrels = loadCollection("scifact-train", evalDir).qrels;
  const parts = await collectParts(Number(values["lexical-depth"]), values.segments);
  const weights = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 1];
  for (const k of [3, 5, 10]) for (const beta of [0.5, 1, 2]) STRATEGIES[`prf-k${k}-b${beta}`] = prfStrategy(k, beta);
  process.stdout.write(`SciFact train, ${parts.length} queries, nDCG@10 (R@100)\nstrategy     ${weights.map((w) => String(w).padStart(12)).join("")}\n`);
  for (const [name, strategy] of Object.entries(STRATEGIES)) {
    if (!values.segments && name.endsWith("-all") && name !== "minmax-all") continue;
    const cells = weights.map((w) => {
      const m = meanMetrics(parts.map((p) => scoreQuery(strategy(p, w).map((s) => s.id), qrels.get(p.queryId) as Map<string, number>)));
      return `${m.ndcg10.toFixed(3)} (${m.recall100.toFixed(2)})`.padStart(12);
    });
    process.stdout.write(`${name.padEnd(12)} ${cells.join("")}\n`);
  }
}

await main();
