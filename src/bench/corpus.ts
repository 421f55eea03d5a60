/**
 * The benchmark corpus: SciFact abstracts (read in place from ../shared/eval when present) topped
 * up with generated one-sentence objects for volume, plus queries, with every embedding computed
 * once by the bundled model on all cores and cached under .cache/bench/ (git-ignored).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createEmbeddingPool } from "../engine/embedding/pool.js";
import { BUNDLED_SPEC } from "../engine/embedding/registry.js";
import { generateObjects, generateQueries } from "./generate.js";

export interface BenchDoc {
  id: string;
  text: string;
}

export interface BenchCorpus {
  docs: BenchDoc[];
  queries: string[];
  /** one row of `dimension` floats per doc */
  vectors: Float32Array;
  queryVectors: Float32Array;
  dimension: number;
}

function sciFactDocs(evalDir: string, max: number): { docs: BenchDoc[]; queries: string[] } {
  const dir = path.join(evalDir, "scifact");
  if (!existsSync(path.join(dir, "corpus.jsonl"))) return { docs: [], queries: [] };
  const read = (file: string) => readFileSync(path.join(dir, file), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const docs = read("corpus.jsonl")
    .slice(0, max)
    .map((row: { _id: string; title: string; text: string }) => ({ id: `sf-${row._id}`, text: `${row.title}\n${row.text}` }));
  const queries = read("queries.jsonl").map((row: { text: string }) => row.text as string);
  return { docs, queries };
}

function paths(cacheDir: string, size: number) {
  const dir = path.join(cacheDir, String(size));
  return { dir, docs: path.join(dir, "docs.json"), vectors: path.join(dir, "vectors.f32"), queryVectors: path.join(dir, "queries.f32") };
}

/** Loads the cached corpus of `size` objects, building it first if needed. */
export async function loadCorpus(size: number, queryCount: number, evalDir: string, cacheDir: string, log: (m: string) => void): Promise<BenchCorpus> {
  const p = paths(cacheDir, size);
  if (existsSync(p.vectors) && existsSync(p.queryVectors) && existsSync(p.docs)) {
    const meta = JSON.parse(readFileSync(p.docs, "utf8")) as Omit<BenchCorpus, "vectors" | "queryVectors">;
    if (meta.queries.length === queryCount) {
      const f32 = (file: string) => {
        const buffer = readFileSync(file);
        return new Float32Array(buffer.buffer, buffer.byteOffset, buffer.byteLength / 4);
      };
      return { ...meta, vectors: f32(p.vectors), queryVectors: f32(p.queryVectors) };
    }
  }
  const scifact = sciFactDocs(evalDir, Math.min(size, 5183));
  const generated = generateObjects(size - scifact.docs.length, 11).map((o) => ({ id: o.id, text: o.title }));
  const docs = [...scifact.docs, ...generated];
  const half = Math.floor(queryCount / 2);
  const queries = [...scifact.queries.slice(0, half), ...generateQueries(queryCount - Math.min(half, scifact.queries.length))];
  log(`embedding ${docs.length} objects and ${queries.length} queries for the ${size}-object corpus (cached)…`);
  const pool = createEmbeddingPool(BUNDLED_SPEC);
  try {
    const docVectors = await pool.embed(docs.map((d) => d.text.slice(0, 2000)));
    const queryVectors = await pool.embed(queries);
    const dimension = docVectors[0]?.length ?? 512;
    const flat = (rows: Float32Array[]) => {
      const out = new Float32Array(rows.length * dimension);
      rows.forEach((row, i) => out.set(row, i * dimension));
      return out;
    };
    const corpus: BenchCorpus = { docs, queries, vectors: flat(docVectors), queryVectors: flat(queryVectors), dimension };
    mkdirSync(p.dir, { recursive: true });
    writeFileSync(p.vectors, Buffer.from(corpus.vectors.buffer));
    writeFileSync(p.queryVectors, Buffer.from(corpus.queryVectors.buffer));
    writeFileSync(p.docs, JSON.stringify({ docs, queries, dimension }));
    return corpus;
  } finally {
    await pool.close();
  }
}

export function row(vectors: Float32Array, dimension: number, i: number): Float32Array {
  return vectors.subarray(i * dimension, (i + 1) * dimension);
}
