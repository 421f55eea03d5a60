/**
 * Running a search (search/search.ts) in process, against a project with real LanceDB tables written
 * directly (so their vectors are known): the query's vector comes from a seeded generator instead of
 * the model, which the e2e tests use. Pages, totals, modes, filters, highlights, and objects gone
 * between ranking and fetching.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EngineContext } from "../../../src/engine/context.js";
import { filterColumn } from "../../../src/engine/filter-fields.js";
import type { ModelSpec } from "../../../src/engine/embedding/model-spec.js";
import { indexTableName, Project, segmentTableName } from "../../../src/engine/project.js";
import { search } from "../../../src/engine/search/search.js";
import { relevantSegments } from "../../../src/engine/search/highlights.js";
import { rankRows } from "../../../src/engine/search/rank.js";
import type { SearchParams } from "../../../src/engine/search/request.js";
import { MAX_RESULTS, VECTOR_CANDIDATES } from "../../../src/engine/search/limits.js";
import type { IndexRow, ObjectRow, SegmentRow } from "../../../src/engine/store/lance-store.js";
import type { IndexRecord, SearchPage, TextHighlight } from "../../../src/engine/types.js";
import { scoredIds } from "../../../src/engine/store/rows.js";
import { tempDir } from "../../helpers/temp.js";
import { cosine, indexTable, oracleHybrid, randomVector, seeded } from "./search-fixture.js";
import { compareRanked } from "../../../src/engine/search/fuse.js";

const DIMENSION = 8;
const COUNT = 300;
const stamp = "2026-01-01T00:00:00.000Z";

/** The query's vector: a seeded function of its text. */
function queryVector(text: string): Float32Array {
  let seed = 17;
  for (const c of text) seed = (Math.imul(seed, 31) + (c.codePointAt(0) as number)) >>> 0;
  return randomVector(seeded(seed), DIMENSION);
}

/** A project whose queries are embedded by queryVector (the model is not what is tested here). */
class SeededQueries extends EngineContext {
  override async embedQuery(_spec: ModelSpec, query: string): Promise<Float32Array> {
    return queryVector(query);
  }
}

/**
 * The last five objects are found only by their highlights: their searchable text and vector are
 * far from "alpha beta", the text and vector of their segments close to it (as a long object's
 * passage can be). The last one's segments are stale: they reach past its text.
 */
const SPECIAL = 5;
const special = (i: number) => i >= COUNT - SPECIAL;
const texts = Array.from({ length: COUNT }, (_, i) =>
  special(i) ? `w${i}` : [`w${i}`, i % 3 === 0 ? "alpha" : "", i % 9 === 0 ? "alpha" : "", i % 7 === 0 ? "beta" : "", i % 2 === 0 ? "filler words here" : ""].filter(Boolean).join(" "),
);
/** The objects' `text` fields (the segments are cut from them) */
const bodies = texts.map((text, i) => (special(i) ? `${text} alpha beta` : text));
const segmentTexts = bodies.map((body, i) => (i === COUNT - 1 ? `${body} gamma delta` : body));
const ids = texts.map((_, i) => `o${String(i).padStart(3, "0")}`);
const random = seeded(23);
/** `id` is filterable (as text), as on an index without filterable rules */
const ID_COLUMN = filterColumn("id");
const near = (v: Float32Array, sign: number) => v.map((x) => sign * x + (random() - 0.5) * 0.01);
const rows: IndexRow[] = texts.map((text, i) => ({
  id: ids[i] as string,
  seq: i + 1,
  text,
  vector: special(i) ? near(queryVector("alpha beta"), -1) : randomVector(random, DIMENSION),
  filters: { [ID_COLUMN]: ids[i] as string },
}));

const index = (id: string, indexType: IndexRecord["configuration"]["index_type"]): IndexRecord => ({
  id,
  configuration: { index_type: indexType },
  model: "use-lite-512",
  dimension: DIMENSION,
  created_at: stamp,
});
const HYBRID = index("idx_hybrid", { name: "text" });
const NEURAL = index("idx_neural", { name: "text", neural_only: true });
const HIGHLIGHTED = index("idx_highlighted", { name: "text", highlights: { text: true } });
const EMPTY = index("idx_empty", { name: "text" });

let ctx: SeededQueries;

beforeAll(async () => {
  ctx = new SeededQueries(new Project(path.join(tempDir("semsearch-search-"), "p")), { oneShot: true });
  const store = await ctx.store();
  const objects: ObjectRow[] = bodies.map((text, i) => ({ id: ids[i] as string, body: JSON.stringify({ id: ids[i], text, n: i }), seq: i + 1, created_at: stamp, updated_at: stamp }));
  await store.upsertObjects(objects);
  for (const record of [HYBRID, NEURAL, HIGHLIGHTED]) await indexTable(store, indexTableName(record.id), rows, DIMENSION, new Map([[ID_COLUMN, "string"]]));
  await store.createIndexTable(indexTableName(EMPTY.id), DIMENSION);
  // two segments per object: its first word, and the rest
  const segments: SegmentRow[] = rows.flatMap((row, i) => {
    const text = segmentTexts[i] as string;
    const cut = text.indexOf(" ");
    const parts: [number, number][] = cut < 0 ? [[0, text.length]] : [[0, cut], [cut + 1, text.length]];
    return parts.map(([start, end], position) => ({
      id: JSON.stringify([row.id, "text", position]),
      object_id: row.id,
      seq: i + 1,
      field: "text",
      position,
      start_char: start,
      end_char: end,
      text: text.slice(start, end),
      vector: special(i) ? near(queryVector("alpha beta"), 1) : row.vector.map((x, k) => x + (k === position ? 0.3 : 0)),
    }));
  });
  const table = segmentTableName(HIGHLIGHTED.id);
  await store.createSegmentTable(table, DIMENSION);
  await store.replaceSegments(table, ids, segments);
  for (const name of [HYBRID, NEURAL, HIGHLIGHTED].map((record) => indexTableName(record.id)).concat(table)) await store.optimizeIndexTable(name);
  await ctx.project.saveIndexes([HYBRID, NEURAL, HIGHLIGHTED, EMPTY]);
});
afterAll(() => ctx?.close());

const run = (record: IndexRecord, params: SearchParams) => search(ctx, record.id, params);

/** Follows `next` from the first page to the last, as a client does. */
async function walk(record: IndexRecord, params: SearchParams): Promise<{ ids: string[]; pages: SearchPage[] }> {
  const out: string[] = [];
  const pages: SearchPage[] = [];
  let offset = params.offset ?? 0;
  let limit = params.limit;
  for (let guard = 0; guard < 200; guard++) {
    const page = await run(record, { ...params, offset, ...(limit === undefined ? {} : { limit }) });
    out.push(...page.hits.map((hit) => hit.id));
    pages.push(page);
    if (!page.pagination.next) return { ids: out, pages };
    ({ offset, limit } = page.pagination.next);
  }
  throw new Error("the walk did not end");
}

/** Every page's total against the results: exact is the count, a minimum at most it and at least the page's end (rule 10). */
function expectTotals(all: string[], pages: SearchPage[], firstOffset = 0) {
  let seen = firstOffset;
  for (const { hits, pagination } of pages) {
    seen += hits.length;
    const { total, total_calculation } = pagination.statistics;
    if (total_calculation === "exact") expect(total).toBe(all.length);
    else expect(total).toBeLessThanOrEqual(all.length);
    expect(total).toBeGreaterThanOrEqual(seen);
  }
  expect(pages.at(-1)?.pagination.statistics).toEqual({ total: all.length, total_calculation: "exact" });
}

describe("search: pages of one ranked list", () => {
  it.each(["hybrid", "lexical", "vector"])("%s: following next returns every result once, in the order of one big page", async (mode) => {
    const whole = await run(HYBRID, { query: "alpha beta", mode, limit: 1000 });
    const walked = await walk(HYBRID, { query: "alpha beta", mode, limit: 7 });
    expect(walked.ids).toEqual(whole.hits.map((hit) => hit.id));
    expect(new Set(walked.ids).size).toBe(walked.ids.length);
    expectTotals(walked.ids, walked.pages);
  });

  it("hybrid: the fused ranking of the README, score for score, at the weight asked for", async () => {
    const store = (await ctx.store()).snapshot();
    const lexical = scoredIds(await store.textSearch(indexTableName(HYBRID.id), "alpha beta", MAX_RESULTS));
    for (const weight of [0.4, 0.9]) {
      const expected = oracleHybrid({ rows, lexical, query: queryVector("alpha beta"), weight });
      const page = await run(HYBRID, { query: "alpha beta", limit: 1000, semanticRatio: weight });
      expect(page.hits.map((hit) => hit.id)).toEqual(expected.map((item) => item.id));
      page.hits.forEach((hit, i) => expect(hit.score).toBeCloseTo(expected[i]?.score as number, 9));
    }
  });

  it("lexical: the matches by BM25 score, equal scores by id; vector: the nearest by cosine (a page of 1,000 asks for every row)", async () => {
    const store = (await ctx.store()).snapshot();
    const lexical = scoredIds(await store.textSearch(indexTableName(HYBRID.id), "alpha", MAX_RESULTS)).sort(compareRanked);
    // (many matches tie: "w3 alpha", "w15 alpha" … score alike)
    expect(new Set(lexical.map((item) => item.score)).size).toBeLessThan(lexical.length / 4);
    const byLexical = await run(HYBRID, { query: "alpha", mode: "lexical", limit: 1000 });
    expect(byLexical.hits.map((hit) => [hit.id, hit.score])).toEqual(lexical.map((item) => [item.id, item.score]));
    expect(byLexical.pagination.statistics).toEqual({ total: lexical.length, total_calculation: "exact" });
    const nearest = rows.map((row) => ({ id: row.id, score: cosine(queryVector("alpha"), row.vector) })).sort(compareRanked);
    const byVector = await run(HYBRID, { query: "alpha", mode: "vector", limit: 1000 });
    expect(byVector.hits.map((hit) => hit.id)).toEqual(nearest.map((item) => item.id));
  });

  it("hybrid: a minimum total grows once the offset passes it, and is exact where the results run out (rule 10)", async () => {
    const union = (await run(HYBRID, { query: "alpha beta", limit: 1000 })).hits.length;
    expect(union).toBeGreaterThan(VECTOR_CANDIDATES + 10);
    expect(union).toBeLessThan(VECTOR_CANDIDATES + 50);
    expect((await run(HYBRID, { query: "alpha beta" })).pagination.statistics).toEqual({ total: VECTOR_CANDIDATES, total_calculation: "minimum" });
    const within = await run(HYBRID, { query: "alpha beta", offset: VECTOR_CANDIDATES - 10, limit: 10 });
    expect(within.pagination.statistics).toEqual({ total: VECTOR_CANDIDATES, total_calculation: "minimum" });
    // the offset exactly at the first total: grown by the page
    const at = await run(HYBRID, { query: "alpha beta", offset: VECTOR_CANDIDATES, limit: 10 });
    expect(at.pagination).toEqual({ pages: 26, page: 26, next: { offset: 260, limit: 10 }, statistics: { total: 260, total_calculation: "minimum" } });
    // the results run out within the page: the end is known
    const end = await run(HYBRID, { query: "alpha beta", offset: union - 3, limit: 10 });
    expect(end.hits.length).toBe(3);
    expect(end.pagination).toEqual({ pages: Math.ceil(union / 10), page: Math.floor((union - 3) / 10) + 1, statistics: { total: union, total_calculation: "exact" } });
    // the page that ends at the last result
    const last = await run(HYBRID, { query: "alpha beta", offset: union - 10, limit: 10 });
    expect(last.pagination.statistics).toEqual({ total: union, total_calculation: "exact" });
    expect(last.pagination.next).toBeUndefined();
    const past = await run(HYBRID, { query: "alpha beta", offset: 400, limit: 10 });
    expect(past.hits).toEqual([]);
    expect(past.pagination.statistics).toEqual({ total: union, total_calculation: "exact" });
  });

  it("neural-only: vector search by default, 250 as a minimum that grows, exact with every object at the end", async () => {
    const walked = await walk(NEURAL, { query: "alpha", limit: 40 });
    expect(walked.pages[0]?.pagination.statistics).toEqual({ total: VECTOR_CANDIDATES, total_calculation: "minimum" });
    expect([...walked.ids].sort()).toEqual(ids);
    expectTotals(walked.ids, walked.pages);
    const vector = await run(HYBRID, { query: "alpha", limit: 1000, mode: "vector", offset: 0 });
    expect(walked.ids.slice(0, vector.hits.length)).toEqual(vector.hits.map((hit) => hit.id));
  });

  it("neural-only: refuses a lexical or hybrid mode (422)", async () => {
    for (const mode of ["lexical", "hybrid"]) await expect(run(NEURAL, { query: "alpha", mode })).rejects.toMatchObject({ code: "INVALID_PARAMETER", exitCode: 4 });
    expect((await run(NEURAL, { query: "alpha", mode: "vector" })).hits.length).toBe(10);
  });
});

describe("search: filters", () => {
  it("ranks a small filtered set whole, with an exact total, in every mode", async () => {
    const expected = ids.filter((id) => id >= "o100" && id <= "o199");
    for (const mode of ["hybrid", "vector"]) {
      const walked = await walk(HYBRID, { query: "alpha beta", mode, filter: "id:[o100 TO o199]", limit: 30 });
      expect([...walked.ids].sort()).toEqual(expected);
      expect(walked.pages.map((page) => page.pagination.statistics)).toEqual(walked.pages.map(() => ({ total: 100, total_calculation: "exact" })));
    }
  });

  it("a filter that leaves nothing, or an index with nothing in it: no pages, total 0 exact; the filter is checked all the same", async () => {
    const none = { pages: 0, page: 1, statistics: { total: 0, total_calculation: "exact" } };
    expect((await run(HYBRID, { query: "alpha", filter: "id:nothing" })).pagination).toEqual(none);
    expect(await run(EMPTY, { query: "alpha" })).toEqual({ hits: [], pagination: none });
    // (a nested field not named in the configuration is refused, whether or not anything is indexed)
    await expect(run(EMPTY, { query: "alpha", filter: "colour.name:red" })).rejects.toMatchObject({ code: "INVALID_FILTER", exitCode: 4 });
  });
});

describe("search: what a hit holds", () => {
  it("the object projected by object_fields, and its text unless snippets are off", async () => {
    const [hit] = (await run(HYBRID, { query: "w5", mode: "lexical", objectFields: "n" })).hits;
    expect(hit).toMatchObject({ id: "o005", object: { n: 5 }, text: texts[5] });
    expect(texts[5]).toBe(bodies[5]);
    const [bare] = (await run(HYBRID, { query: "w5", mode: "lexical", snippets: false })).hits;
    expect(bare).toMatchObject({ id: "o005", object: { id: "o005" }, text: "" });
    expect(bare?.highlights).toBeUndefined();
  });

  it.each(["hybrid", "lexical"] as const)("%s, with highlights: objects by their best relevant highlight first, each once over every page, highlights cut from the field", async (mode) => {
    const params = { query: "alpha beta", resultFields: "highlights", mode } as const;
    const whole = await run(HIGHLIGHTED, { ...params, limit: 1000 });
    const regular = await run(HIGHLIGHTED, { query: "alpha beta", mode, limit: 1000 });
    const walked = await walk(HIGHLIGHTED, { ...params, limit: 9 });
    expect(walked.ids).toEqual(whole.hits.map((hit) => hit.id));
    expect(new Set(walked.ids).size).toBe(walked.ids.length);
    // objects found by their highlights only make the list longer than the regular one
    const found = ids.filter((_, i) => special(i));
    expect(found).toHaveLength(SPECIAL);
    expect(regular.hits.map((hit) => hit.id)).not.toContain(found[0]);
    expect(walked.ids).toEqual(expect.arrayContaining(found));
    expect(walked.ids.length).toBe(regular.hits.length + SPECIAL);
    expectTotals(walked.ids, walked.pages);
    // first the objects of the relevant segments (the upper half of their score range), then the rest
    const snapshot = (await ctx.store()).snapshot();
    const q = { mode, text: "alpha beta", vector: queryVector("alpha beta"), vectorWeight: 0.4, offset: 0, limit: 10 } as const;
    // (rule 1: the 250 most relevant segments are the candidates)
    const segments = (await rankRows(snapshot, segmentTableName(HIGHLIGHTED.id), q, 250)).ranked.top(250);
    const relevant = new Set(relevantSegments(segments).map((segment) => JSON.parse(segment.id)[0] as string));
    expect(relevant.size).toBeLessThan(new Set(segments.map((segment) => JSON.parse(segment.id)[0] as string)).size);
    expect(new Set(walked.ids.slice(0, relevant.size))).toEqual(relevant);
    for (const hit of whole.hits) {
      expect((hit.highlights?.length ?? 0) > 0).toBe(relevant.has(hit.id) && hit.id !== ids[COUNT - 1]);
      const body = bodies[ids.indexOf(hit.id)] as string;
      for (const highlight of hit.highlights as TextHighlight[]) {
        const { start_char, end_char } = highlight.references[0]?.position ?? { start_char: -1, end_char: -1 };
        expect(end_char).toBeLessThanOrEqual(body.length);
        expect(highlight.highlight.text).toBe(body.slice(start_char, end_char));
      }
    }
  });

  it("an object deleted after the index was ranked is left out of the page, not an error", async () => {
    const store = await ctx.store();
    const before = await run(HYBRID, { query: "alpha beta", limit: 20 });
    const gone = before.hits[3]?.id as string;
    const [row] = (await store.getObjects([gone])).values();
    await store.deleteObjects([gone]);
    try {
      const after = await run(HYBRID, { query: "alpha beta", limit: 20 });
      expect(after.hits.map((hit) => hit.id)).toEqual(before.hits.map((hit) => hit.id).filter((id) => id !== gone));
      expect(after.pagination).toEqual(before.pagination);
    } finally {
      await store.upsertObjects([row as ObjectRow]);
    }
  });
});
