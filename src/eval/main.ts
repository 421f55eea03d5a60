/**
 * `npm run eval`: relevance of the real engine (the code path of `semsearch search`) on the
 * test collections in ../shared/eval, for lexical-only, vector-only and hybrid ranking.
 * Built indexes are cached under .cache/eval/ (git-ignored), so a re-run only searches.
 *
 *   npm run eval -- [--collections scifact,cranfield,cisi | --collection coco-mini] [--modes lexical,vector,hybrid]
 *                   [--vector-weight 0.3] [--json] [--eval-dir ../shared/eval]
 *                   [--model use | <Hugging Face id> | <model folder>] [--typos]
 *
 * --typos misspells one word of every query (eval/typos.ts), to measure typo tolerance.
 *
 * With --model, indexes are built with that model (downloaded first if it is a hub id not yet
 * pulled) and cached apart from the bundled model's.
 *
 * `--collection coco-mini` evaluates caption → image retrieval (R@1/5/10, MRR) on an image index,
 * images only (vector mode), with the CLIP model `--model` names (default: Xenova/clip-vit-base-patch32).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Engine } from "../engine/index.js";
import { percentile } from "../bench/stats.js";
import { COLLECTIONS, loadCollection, type Collection, type CollectionName } from "./collections.js";
import { meanMetrics, scoreQuery, type Metrics } from "./metrics.js";
import { withTypo } from "./typos.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface ModeResult extends Metrics {
  mode: string;
  queries: number;
  latency_p50_ms: number;
  latency_p95_ms: number;
}

export interface CollectionResult {
  collection: string;
  documents: number;
  ingest_seconds: number;
  modes: ModeResult[];
}

function log(message: string) {
  process.stderr.write(message + "\n");
}

/** Builds (or reuses) the index of a collection; returns the engine, index id and build time. */
export async function prepareIndex(collection: Collection, cacheDir: string, model?: string): Promise<{ engine: Engine; indexId: string; seconds: number }> {
  const modelDir = model === undefined || model === "use" ? cacheDir : path.join(cacheDir, "models", model.replace(/[^A-Za-z0-9._-]+/g, "_"));
  const project = path.join(modelDir, collection.name.replace(/-train$/, ""));
  const marker = path.join(project, "eval-index.json");
  const engine = new Engine({ projectDir: project });
  if (existsSync(marker)) {
    const cached = JSON.parse(readFileSync(marker, "utf8")) as { indexId: string; documents: number; seconds: number };
    if (cached.documents === collection.documents.length) {
      await engine.waitForIndex(cached.indexId);
      return { engine, indexId: cached.indexId, seconds: cached.seconds };
    }
  }
  mkdirSync(project, { recursive: true });
  log(`${collection.name}: indexing ${collection.documents.length} documents (cached for later runs)…`);
  const start = performance.now();
  const image = collection.documents.some((doc) => doc.image !== undefined);
  const jsonl = collection.documents.map((doc) => JSON.stringify(image ? { id: doc.id, image: doc.image } : doc)).join("\n");
  await engine.addObjects([{ text: jsonl, source: collection.name }]);
  const fields = image ? { searchable: { allow: ["image"] }, images: ["image"] } : { searchable: { allow: ["title", "text"] } };
  const { id } = await engine.createIndex({
    configuration: { index_type: { name: image ? "image" : "text", ...(image ? { neural_only: true } : {}) }, fields, ...(model ? { model } : {}) },
  });
  await engine.waitForIndex(id, { onProgress: (p) => process.stderr.write(`\r  ${p.done}/${p.total}`) });
  process.stderr.write("\n");
  const seconds = (performance.now() - start) / 1000;
  writeFileSync(marker, JSON.stringify({ indexId: id, documents: collection.documents.length, seconds }) + "\n");
  return { engine, indexId: id, seconds };
}

/** Runs every judged query of a collection in one mode. */
export async function evaluateMode(
  engine: Engine,
  indexId: string,
  collection: Collection,
  mode: string,
  vectorWeight?: number,
  typos = false,
): Promise<ModeResult> {
  const perQuery: Metrics[] = [];
  const latencies: number[] = [];
  for (const [position, judged] of collection.queries.entries()) {
    const query = typos ? { ...judged, text: withTypo(judged.text, position) } : judged;
    const start = performance.now();
    // (a fusion weight is the semantic ratio of a hybrid search; the engine takes one or a mode)
    const ranking = vectorWeight !== undefined && mode === "hybrid" ? { semanticRatio: vectorWeight } : { mode };
    const page = await engine.search(indexId, { query: query.text, limit: 100, ...ranking });
    latencies.push(performance.now() - start);
    perQuery.push(scoreQuery(page.hits.map((hit) => hit.id), collection.qrels.get(query.id) as Map<string, number>));
  }
  return {
    mode,
    queries: perQuery.length,
    ...meanMetrics(perQuery),
    latency_p50_ms: percentile(latencies, 50),
    latency_p95_ms: percentile(latencies, 95),
  };
}

function fixed(value: number, digits = 3): string {
  return value.toFixed(digits);
}

export function renderResults(results: CollectionResult[]): string {
  const lines = ["collection   mode     nDCG@10  R@1    R@5    R@10   R@100  MRR@10  p50 ms  p95 ms  queries  ingest s"];
  for (const result of results) {
    for (const m of result.modes) {
      lines.push(
        [
          result.collection.padEnd(12),
          m.mode.padEnd(8),
          fixed(m.ndcg10).padStart(7),
          fixed(m.recall1).padStart(5),
          fixed(m.recall5).padStart(6),
          fixed(m.recall10).padStart(6),
          fixed(m.recall100).padStart(6),
          fixed(m.mrr10).padStart(7),
          fixed(m.latency_p50_ms, 1).padStart(7),
          fixed(m.latency_p95_ms, 1).padStart(7),
          String(m.queries).padStart(8),
          fixed(result.ingest_seconds, 0).padStart(9),
        ].join(" "),
      );
    }
  }
  return lines.join("\n") + "\n";
}

async function main() {
  const { values } = parseArgs({
    options: {
      collections: { type: "string", default: COLLECTIONS.join(",") },
      collection: { type: "string" },
      modes: { type: "string", default: "lexical,vector,hybrid" },
      "vector-weight": { type: "string" },
      "eval-dir": { type: "string", default: path.resolve(ROOT, "..", "shared", "eval") },
      "cache-dir": { type: "string", default: path.join(ROOT, ".cache", "eval") },
      json: { type: "boolean", default: false },
      model: { type: "string" },
      typos: { type: "boolean", default: false },
    },
  });
  const weight = values["vector-weight"] === undefined ? undefined : Number(values["vector-weight"]);
  const results: CollectionResult[] = [];
  const names = (values.collection ?? values.collections).split(",");
  for (const name of names) {
    const collection = loadCollection(name as CollectionName | "scifact-train" | "coco-mini", values["eval-dir"]);
    const { engine, indexId, seconds } = await prepareIndex(collection, values["cache-dir"], values.model);
    try {
      const modes: ModeResult[] = [];
      // An image collection's documents have no text: only the vector mode means anything.
      const asked = collection.documents.some((doc) => doc.image !== undefined) ? ["vector"] : values.modes.split(",");
      for (const mode of asked) {
        log(`${collection.name}: ${mode} over ${collection.queries.length} queries…`);
        modes.push(await evaluateMode(engine, indexId, collection, mode, weight, values.typos));
      }
      results.push({ collection: collection.name, documents: collection.documents.length, ingest_seconds: seconds, modes });
    } finally {
      await engine.close();
    }
  }
  process.stdout.write(values.json ? JSON.stringify(results, null, 2) + "\n" : renderResults(results));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) await main();
