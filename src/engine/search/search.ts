/** Searching an index: embed the query with the index's model, rank, fuse, page, attach objects and highlights. */
import type { EngineContext } from "../context.js";
import { isImageIndex, isNeuralOnly } from "../config.js";
import { indexModel } from "../embedding/registry.js";
import { InternalError, ValidationError, type Warning } from "../errors.js";
import { FieldRules, ownValue } from "../fields.js";
import { fieldResolver } from "../filter-fields.js";
import { findIndex } from "../indexes.js";
import { buildingState } from "../status.js";
import { highlightsEnabled } from "../indexing/extract.js";
import { displayReference } from "../images/reference.js";
import { failpoint } from "../failpoint.js";
import { imageTableName, indexTableName, indexTables, segmentTableName } from "../project.js";
import type { Snapshot } from "../store/lance-store.js";
import { withTopFirst } from "../store/rows.js";
import type { IndexRecord, JsonObject, ScoreExplanation, SearchHit, SearchPage } from "../types.js";
import { DEFAULT_VECTOR_WEIGHT, LEXICAL_RESCORE_DEPTH, type ScoredId } from "./fuse.js";
import {
  combineSegments,
  groupByObject,
  imageHighlights,
  MAX_HIGHLIGHTS,
  rankByHighlights,
  relevantSegments,
  toTextHighlight,
  type SegmentHit,
} from "./highlights.js";
import { compileFilter } from "./filters.js";
import { filterFieldPaths } from "./filter-syntax.js";
import { filterFieldWarning, objectFieldWarning } from "./field-warnings.js";
import { MAX_RESULTS } from "./limits.js";
import { pageTotal, paginate } from "./paginate.js";
import { bestImageVectors, lexicalMatches, rankRows, type RankQuery } from "./rank.js";
import { lexicalQuery } from "./query-words.js";
import { DEFAULT_TOKENIZER } from "../tokenizer.js";
import { decomposedQueryWarning, filterInForm, textForm } from "../text-form.js";
import { parseSearchParams, projectObject, type SearchMode, type SearchParams, type SearchRequest } from "./request.js";

/** The mode a search runs in: the index's own unless asked otherwise; a neural-only index has no lexical part. */
function searchMode(index: IndexRecord, request: SearchRequest): SearchMode {
  const asked = request.mode;
  if (!isNeuralOnly(index.configuration)) return asked ?? "hybrid";
  if (request.semanticRatio !== null && request.semanticRatio < 1) {
    throw new ValidationError("INVALID_PARAMETER", `Index ${index.id} is neural-only: it has no lexical part for semantic_ratio ${request.semanticRatio}`, {
      issues: [{ path: "semantic_ratio", message: "neural-only indexes search vectors only (semantic_ratio 1)" }],
    });
  }
  if (asked === null || asked === "vector") return "vector";
  throw new ValidationError("INVALID_PARAMETER", `Index ${index.id} is neural-only: it has no lexical part for mode "${asked}"`, {
    issues: [{ path: "mode", message: "neural-only indexes search vectors only" }],
  });
}

/** The most relevant highlight segments (rule 1), grouped by object. */
async function bestSegments(store: Snapshot, index: IndexRecord, q: RankQuery): Promise<Map<string, SegmentHit[]>> {
  const table = segmentTableName(index.id);
  // The filter's row count is of objects, not segments: segments rank without it.
  const ranked = relevantSegments((await rankRows(store, table, { ...q, filtered: undefined }, MAX_HIGHLIGHTS)).ranked.top(MAX_HIGHLIGHTS));
  const info = await store.segmentInfo(table, ranked.map((hit) => hit.id));
  const hits: SegmentHit[] = [];
  for (const { id, score } of ranked) {
    const segment = info.get(id);
    if (segment) {
      hits.push({ objectId: segment.object_id, field: segment.field, position: segment.position, start: segment.start_char, end: segment.end_char, score });
    }
  }
  return groupByObject(hits);
}

function highlightsOf(object: JsonObject, segments: readonly SegmentHit[] | undefined) {
  return combineSegments(segments ?? []).flatMap((span) => {
    // the field is a top-level key (it may hold a dot), read as an own key: `constructor` is a field like any other
    const text = ownValue(object, span.field);
    return typeof text === "string" && span.end <= text.length ? [toTextHighlight(span, text)] : [];
  });
}

/**
 * Runs a search. The whole ranked list is computed and the page sliced from it (LanceDB's own
 * offset would apply to each part before fusion), so pages never overlap or skip. With highlights,
 * objects are ranked by their best highlight first, then the rest of the regular ranking.
 */
export async function search(ctx: EngineContext, indexId: string, params: SearchParams): Promise<SearchPage> {
  try {
    return await searchSnapshot(ctx, indexId, params);
  } catch (error) {
    // A snapshot's files can be removed under it when the worker compacts and cleans up old
    // versions while the search runs (rare: old versions are kept a minute); once more, on the latest.
    if (error instanceof InternalError && error.code === "STORAGE_ERROR") return searchSnapshot(ctx, indexId, params);
    throw error;
  }
}

async function searchSnapshot(ctx: EngineContext, indexId: string, params: SearchParams): Promise<SearchPage> {
  const parsed = parseSearchParams(params);
  const index = await findIndex(ctx, indexId);
  // The query and the filter's values in the form the index holds text in (text-form.ts).
  const form = textForm(index);
  const request = { ...parsed, query: form(parsed.query), filter: parsed.filter && filterInForm(parsed.filter, form) };
  const table = indexTableName(index.id);
  const mode = searchMode(index, request);
  // Loading the model is most of a cold start: overlap it with opening the database.
  const queryVector = ctx.embedQuery(indexModel(index), request.query);
  queryVector.catch(() => {});
  // One snapshot for the whole search: its queries read the same versions of the tables.
  const store = (await ctx.store()).snapshot();
  const building = await buildingState(ctx, index);
  const withState = (page: SearchPage): SearchPage => (building ? { ...page, building } : page);
  const empty = withState({ hits: [], pagination: paginate(request.offset, request.limit, 0, { total: 0, exact: true }) });
  // The filter is checked against the index even when nothing is indexed yet, so its errors do not depend on timing.
  const resolver = request.filter ? fieldResolver(index.configuration, await store.filterColumns(table)) : undefined;
  const where = request.filter && resolver ? compileFilter(request.filter, resolver) : undefined;
  const warnings: Warning[] = [];
  const decomposed = decomposedQueryWarning(index, parsed.query, parsed.filter);
  if (decomposed) warnings.push(decomposed);
  /** The page with the search's warnings; `shown`: the objects it shows, for `--object-fields` no object has. */
  const withWarnings = async (page: SearchPage, shown: readonly JsonObject[] = []): Promise<SearchPage> => {
    if (request.objectFields && params.fieldWarnings === true) {
      const unknown = await objectFieldWarning(store, request.objectFields, shown);
      if (unknown) warnings.push(unknown);
    }
    return warnings.length > 0 ? { ...page, warnings } : page;
  };
  const filtered = where === undefined ? undefined : await store.countRows(table, where);
  if (filtered === 0 && request.filter && resolver && params.fieldWarnings === true) {
    // Nothing matched: a field of the filter that no indexed object has (a misspelt one) is why; say
    // so, with the closest field the objects have.
    const valueless = async (path: string) => {
      const field = resolver(path);
      return field.kind === "empty" || (field.kind === "column" && (await store.countRows(table, compileFilter({ kind: "exists", field: { path, column: 1 } }, resolver))) === 0);
    };
    const paths = filterFieldPaths(request.filter);
    const flags = await Promise.all(paths.map(valueless));
    const warning = await filterFieldWarning(store, paths.filter((_, i) => flags[i]));
    if (warning) warnings.push(warning);
  }
  if (filtered === 0) return withWarnings(empty);
  // (a filter that leaves rows already says the index has some; without one, the count runs beside the lexical query)
  const count = filtered ?? store.countRows(table);
  Promise.resolve(count).catch(() => {});
  const image = isImageIndex(index.configuration);
  // What needs no vector is read while the query is embedded (in a cold process, while the model
  // loads): the lexical part, the stored vectors of its top matches for the rescoring, and (a
  // one-shot process) the vector index.
  let lexical: RankQuery["lexical"];
  const tokenizer = index.tokenizer ?? DEFAULT_TOKENIZER;
  const lexicalText = lexicalQuery(request.query, tokenizer);
  if (mode !== "vector") {
    const rows = lexicalMatches(store, table, lexicalText, MAX_RESULTS, where, tokenizer).then((hits) => withTopFirst(hits, LEXICAL_RESCORE_DEPTH));
    const vectors = mode === "hybrid" && !image ? rows.then((hits) => store.vectorsOfRows(table, hits, LEXICAL_RESCORE_DEPTH)) : undefined;
    rows.catch(() => {});
    vectors?.catch(() => {});
    lexical = { table, rows, ...(vectors ? { vectors } : {}) };
  }
  if ((await count) === 0) return withWarnings(empty);
  if (ctx.oneShot && mode !== "lexical" && !image) store.prewarmVectorIndex(table).catch(() => {});
  const vector = await queryVector;
  const q: RankQuery = {
    mode,
    text: request.query,
    lexicalText,
    tokenizer,
    vector: vector as Float32Array,
    vectorWeight: request.semanticRatio ?? DEFAULT_VECTOR_WEIGHT,
    offset: request.offset,
    limit: request.limit,
    where,
    filtered,
    ...(lexical ? { lexical } : {}),
  };
  const regularRanking = await rankRows(store, table, q, undefined, image ? bestImageVectors(store, imageTableName(index.id)) : undefined);
  const { ranked: regular, estimate, whole } = regularRanking;
  const segments = request.highlights && highlightsEnabled(index.configuration) ? await bestSegments(store, index, q) : null;
  // An image index ranks an object by its best image already: its highlights do not reorder results.
  // (Only the page is ranked in full order, unless highlights put objects before the regular ranking.)
  const byHighlights = segments !== null && !image && params.highlightsRank !== false;
  const ranked: ScoredId[] = byHighlights ? rankByHighlights(segments, regular.top(MAX_RESULTS)) : regular.top(request.offset + request.limit);
  const available = byHighlights ? ranked.length : regular.count;

  const page = ranked.slice(request.offset, request.offset + request.limit);
  const ids = page.map((hit) => hit.id);
  if (byHighlights && params.fieldWarnings === true && reordered(ids, regular.top(request.offset + request.limit).slice(request.offset))) warnings.push(HIGHLIGHTS_REORDERED);
  const explained = request.explain ? regularRanking.explain(ids) : null;
  // The searchable text is for snippets in tables; JSON callers do not ask for it.
  const [objects, texts, images] = await Promise.all([
    store.getObjects(ids),
    params.snippets === false ? new Map<string, string>() : store.texts(table, ids),
    image && (request.highlights || params.snippets !== false) ? store.partSimilarities(imageTableName(index.id), q.vector, ids) : [],
  ]);
  const pictures = imageHighlights(ids, images.map((hit) => ({ objectId: hit.object_id, position: hit.position, identifier: hit.text, score: hit.score })));
  let budget = MAX_HIGHLIGHTS - [...pictures.values()].reduce((sum, list) => sum + list.length, 0);
  const hits: SearchHit[] = [];
  const shown: JsonObject[] = []; // (the page's whole objects, for the object fields' check)
  const rules = new FieldRules(index.configuration);
  for (const { id, score } of page) {
    const row = objects.get(id);
    if (!row) continue; // deleted between ranking and fetching
    const object = JSON.parse(row.body) as JsonObject;
    shown.push(object);
    const hit: SearchHit = { id, score, object: projectObject(id, rules.crawled(object), request.objectFields), text: texts.get(id) ?? "" };
    if (request.score) hit.resultScore = score;
    if (explained) hit.explain = explainHit(explained.get(id), byHighlights ? segments?.get(id) : undefined, score);
    const best = pictures.get(id)?.[0];
    if (best && params.snippets !== false) hit.image = displayReference(best.media_identifier);
    if (request.highlights) {
      const text = image ? highlightsOf(object, segments?.get(id)).slice(0, Math.max(0, budget)) : highlightsOf(object, segments?.get(id));
      if (image) budget -= text.length;
      hit.highlights = [...(pictures.get(id) ?? []), ...text];
    }
    hits.push(hit);
  }
  // Highlighted objects outside the regular ranking make the list longer than its total: then a minimum.
  const first = available > regular.count ? { ...estimate, exact: false } : estimate;
  const total = pageTotal(first, request.offset, request.limit, available, whole);
  return withWarnings(withState({ hits, pagination: paginate(request.offset, request.limit, available, total) }), shown);
}

/**
 * Said to a person whose page highlights reordered (spec §4.4): a search without `highlights` (the
 * search page, the page-through) shows the same objects in another order.
 */
const HIGHLIGHTS_REORDERED: Warning = {
  code: "HIGHLIGHTS_REORDERED",
  message: "Results are ordered by their best highlight, as the service ranks a search with highlights; without --result-fields highlights (and on the search page) they are ordered by relevance.",
};

/** Whether a page's ids differ from the regular ranking's at the same places. */
function reordered(ids: readonly string[], regular: readonly ScoredId[]): boolean {
  return ids.some((id, i) => regular[i]?.id !== id);
}

/** A result's explanation: its regular ranking's parts, and when highlights ranked it, its best highlight's score. */
function explainHit(regular: ScoreExplanation | undefined, highlighted: readonly SegmentHit[] | undefined, score: number): ScoreExplanation {
  const parts = regular ?? { ranking: "hybrid" as const };
  return highlighted && highlighted.length > 0 ? { ...parts, ranking: "highlight", highlight: { score } } : parts;
}

/**
 * Loads what searching this project's indexes needs (the database, each index's model, and one run
 * of each model), so that a long-running process answers its first search as fast as the next.
 * Indexes whose model cannot be loaded are left for their first search to report.
 */
export async function warmUp(ctx: EngineContext): Promise<void> {
  failpoint("serve:warm-up");
  if (!(await ctx.project.exists())) return;
  const store = await ctx.store();
  const indexes = await ctx.project.indexes();
  const specs = new Map(indexes.map((index) => indexModel(index)).map((spec) => [JSON.stringify(spec), spec]));
  for (const spec of specs.values()) {
    try {
      await ctx.embedQuery(spec, "warm up");
    } catch {
      // the first search of an index with this model says what is wrong
    }
  }
  // Each table's approximate vector index, where it has one, read into memory now rather than by a first search.
  const snapshot = store.snapshot();
  for (const table of indexes.flatMap((index) => indexTables(index))) {
    try {
      await snapshot.prewarmVectorIndex(table);
    } catch {
      // a table that cannot be read is reported by the first search of its index
    }
  }
}
