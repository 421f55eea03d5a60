/** Searching an index: embed the query with the index's model, rank, fuse, page, attach objects. */
import type { EngineContext } from "../context.js";
import { isNeuralOnly } from "../config.js";
import { loadModel } from "../embedding/registry.js";
import { findIndex } from "../indexes.js";
import { indexTableName } from "../project.js";
import type { IndexRecord, JsonObject, SearchHit, SearchPage } from "../types.js";
import { ValidationError } from "../errors.js";
import { compareRanked, DEFAULT_VECTOR_WEIGHT, fuseWeighted, LEXICAL_RESCORE_DEPTH, type ScoredId } from "./fuse.js";
import { MAX_RESULTS, VECTOR_CANDIDATES } from "./limits.js";
import { hybridTotal, neuralTotal, neuralWindow, paginate, type TotalEstimate } from "./paginate.js";
import { parseSearchParams, projectObject, type SearchMode, type SearchParams } from "./request.js";

interface Ranking {
  ranked: ScoredId[];
  estimate: TotalEstimate;
}

async function rankNeural(ctx: EngineContext, table: string, vector: Float32Array, offset: number, limit: number): Promise<Ranking> {
  const want = neuralWindow(offset, limit);
  const ranked = (await (await ctx.store()).vectorSearch(table, vector, want)).sort(compareRanked);
  return { ranked, estimate: neuralTotal(offset, limit, want, ranked.length) };
}

async function rankLexical(ctx: EngineContext, table: string, query: string): Promise<Ranking> {
  const ranked = (await (await ctx.store()).textSearch(table, query, MAX_RESULTS)).sort(compareRanked);
  return { ranked, estimate: { total: ranked.length, exact: ranked.length < MAX_RESULTS } };
}

async function rankHybrid(ctx: EngineContext, table: string, vector: Float32Array, query: string, weight: number): Promise<Ranking> {
  const store = await ctx.store();
  const [vectorHits, lexicalHits] = await Promise.all([
    store.vectorSearch(table, vector, VECTOR_CANDIDATES),
    store.textSearch(table, query, MAX_RESULTS),
  ]);
  // Exact cosine for the top lexical matches that are not among the nearest, so the vector part
  // scores every strong candidate (see fuse.ts for the measurements behind this).
  const nearest = new Set(vectorHits.map((hit) => hit.id));
  const rescore = lexicalHits.slice(0, LEXICAL_RESCORE_DEPTH).filter((hit) => !nearest.has(hit.id));
  const cosine = [...vectorHits, ...(await store.similarities(table, vector, rescore.map((hit) => hit.id)))];
  const ranked = fuseWeighted(lexicalHits, cosine, weight).slice(0, MAX_RESULTS);
  return {
    ranked,
    estimate: hybridTotal(vectorHits.length, lexicalHits.length, ranked.length, lexicalHits.length >= MAX_RESULTS),
  };
}

/** The mode a search runs in: the index's own unless asked otherwise; a neural-only index has no lexical part. */
function searchMode(index: IndexRecord, asked: SearchMode | null): SearchMode {
  if (!isNeuralOnly(index.configuration)) return asked ?? "hybrid";
  if (asked === null || asked === "vector") return "vector";
  throw new ValidationError("INVALID_PARAMETER", `Index ${index.id} is neural-only: it has no lexical part for mode "${asked}"`, {
    issues: [{ path: "mode", message: "neural-only indexes search vectors only" }],
  });
}

/**
 * Runs a search. The whole ranked list is computed and the page sliced from it (LanceDB's own
 * offset would apply to each part before fusion), so pages never overlap or skip.
 */
export async function search(ctx: EngineContext, indexId: string, params: SearchParams): Promise<SearchPage> {
  const request = parseSearchParams(params);
  const index = findIndex(ctx, indexId);
  const table = indexTableName(index.id);
  // Loading the model is most of a cold start: overlap it with opening the database.
  const queryVector = loadModel(index.model).then((model) => model.embedTexts([request.query]));
  queryVector.catch(() => {});
  const store = await ctx.store();
  if ((await store.countRows(table)) === 0) {
    return { hits: [], pagination: paginate(request.offset, request.limit, 0, { total: 0, exact: true }) };
  }
  const mode = searchMode(index, request.mode);
  const [vector] = await queryVector;
  const { ranked, estimate } =
    mode === "vector"
      ? await rankNeural(ctx, table, vector as Float32Array, request.offset, request.limit)
      : mode === "lexical"
        ? await rankLexical(ctx, table, request.query)
        : await rankHybrid(ctx, table, vector as Float32Array, request.query, request.vectorWeight ?? DEFAULT_VECTOR_WEIGHT);
  const page = ranked.slice(request.offset, request.offset + request.limit);
  const ids = page.map((hit) => hit.id);
  const [objects, texts] = await Promise.all([store.getObjects(ids), store.texts(table, ids)]);
  const hits: SearchHit[] = [];
  for (const { id, score } of page) {
    const row = objects.get(id);
    if (!row) continue; // deleted between ranking and fetching
    const hit: SearchHit = {
      id,
      score,
      object: projectObject(id, JSON.parse(row.body) as JsonObject, request.objectFields),
      text: texts.get(id) ?? "",
    };
    if (request.highlights) hit.highlights = [];
    hits.push(hit);
  }
  return { hits, pagination: paginate(request.offset, request.limit, ranked.length, estimate) };
}
