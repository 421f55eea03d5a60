/**
 * Ranking a table's rows (search/rank.ts) against real LanceDB tables in a temporary directory:
 * the hybrid ranking agrees with the fusion worked out plainly (search-fixture.ts), score for score;
 * totals, small filtered sets and neural-only paging at their boundaries.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareRanked, LEXICAL_RESCORE_DEPTH, type ScoredId } from "../../../src/engine/search/fuse.js";
import { MAX_RESULTS, SMALL_FILTERED_SET, VECTOR_CANDIDATES } from "../../../src/engine/search/limits.js";
import { bestImageVectors, rankRows, tableVectors, type RankQuery, type Ranking, type VectorSource } from "../../../src/engine/search/rank.js";
import { LanceStore, type IndexRow, type SegmentRow } from "../../../src/engine/store/lance-store.js";
import { scoredIds } from "../../../src/engine/store/rows.js";
import { tempDir } from "../../helpers/temp.js";
import { cosine, indexTable, oracleHybrid, randomVector, readAhead, seeded } from "./search-fixture.js";

const DIMENSION = 8;
let store: LanceStore;

/** 300 rows: "alpha" in every third (twice in every ninth), "beta" in every seventh, each with a word of its own. */
const MIXED = "mixed";
const mixedRows: IndexRow[] = (() => {
  const random = seeded(7);
  return Array.from({ length: 300 }, (_, i) => {
    const words = [`w${i}`, i % 3 === 0 ? "alpha" : "", i % 9 === 0 ? "alpha" : "", i % 7 === 0 ? "beta" : "", i % 2 === 0 ? "filler words here" : ""];
    return { id: `m${String(i).padStart(3, "0")}`, seq: i + 1, text: words.filter(Boolean).join(" "), vector: randomVector(random, DIMENSION) };
  });
})();

/** 1,300 rows of the same text (equal BM25 scores), for the rescoring depth and the small-set boundary. */
const SAME = "same";
const sameRows: IndexRow[] = (() => {
  const random = seeded(11);
  return Array.from({ length: 1300 }, (_, i) => ({ id: `s${String(i).padStart(4, "0")}`, seq: i + 1, text: "gamma ray", vector: randomVector(random, DIMENSION) }));
})();

beforeAll(async () => {
  store = await LanceStore.open(tempDir("semsearch-rank-"));
  await indexTable(store, MIXED, mixedRows, DIMENSION);
  await indexTable(store, SAME, sameRows, DIMENSION);
  // As a built index is: its rows in the full-text index. (Rows not yet in it are searched flat, and
  // LanceDB 0.31's flat search with a filter missed matches of a term repeated in a row: see the report.)
  for (const table of [MIXED, SAME]) await store.optimizeIndexTable(table);
});
afterAll(() => store?.close());

function query(overrides: Partial<RankQuery> & Pick<RankQuery, "text" | "vector">): RankQuery {
  return { mode: "hybrid", vectorWeight: 0.4, offset: 0, limit: 10, ...overrides };
}

/** The whole ranked list. */
const all = (ranking: Ranking): ScoredId[] => ranking.ranked.top(ranking.ranked.count);

/** Every lexical match of `text` with its BM25 score, as the store finds them. */
async function lexicalMatches(table: string, text: string, where?: string): Promise<ScoredId[]> {
  return scoredIds(await store.snapshot().textSearch(table, text, MAX_RESULTS, where));
}

/**
 * The same ids in the same order, with the same scores: to 9 digits where the ranking computes the
 * cosines (rows.ts), to 6 where LanceDB's exact scan does, in single precision (a small filtered set,
 * images).
 */
function expectSameRanking(got: readonly ScoredId[], expected: readonly ScoredId[], digits = 9) {
  expect(got.map((item) => item.id)).toEqual(expected.map((item) => item.id));
  got.forEach((item, i) => expect(item.score).toBeCloseTo((expected[i] as ScoredId).score, digits));
}

describe("rankRows, hybrid", () => {
  it("ranks the union of the lexical matches and the 250 nearest as the README's fusion does, score for score", async () => {
    const lexical = await lexicalMatches(MIXED, "alpha beta");
    const vector = randomVector(seeded(1), DIMENSION);
    for (const weight of [0.4, 0.8]) {
      const expected = oracleHybrid({ rows: mixedRows, lexical, query: vector, weight });
      // some lexical matches are not among the nearest: the rescoring has work to do
      const nearest = new Set(expected.length > 0 ? mixedRows.map((row) => ({ id: row.id, score: cosine(vector, row.vector) })).sort(compareRanked).slice(0, VECTOR_CANDIDATES).map((item) => item.id) : []);
      expect(lexical.filter((item) => !nearest.has(item.id)).length).toBeGreaterThan(10);
      const snapshot = store.snapshot();
      const plain = await rankRows(snapshot, MIXED, query({ text: "alpha beta", vector, vectorWeight: weight }));
      expectSameRanking(all(plain), expected);
      // as search.ts runs it: the lexical part and its top matches' vectors read ahead
      const ahead = store.snapshot();
      const early = await rankRows(ahead, MIXED, query({ text: "alpha beta", vector, vectorWeight: weight, lexical: readAhead(ahead, MIXED, "alpha beta") }));
      expectSameRanking(all(early), expected);
    }
  });

  it("uses a lexical part read ahead only for the table it was read from", async () => {
    const vector = randomVector(seeded(12), DIMENSION);
    const snapshot = store.snapshot();
    const expected = oracleHybrid({ rows: sameRows, lexical: await lexicalMatches(SAME, "gamma"), query: vector, weight: 0.4 });
    const ranking = await rankRows(snapshot, SAME, query({ text: "gamma", vector, lexical: readAhead(snapshot, MIXED, "gamma") }));
    expectSameRanking(all(ranking), expected);
  });

  it("totals by rule 7: the greater part's count, a minimum when the union is longer; the list is whole", async () => {
    const lexical = await lexicalMatches(MIXED, "alpha beta");
    const vector = randomVector(seeded(2), DIMENSION);
    const ranking = await rankRows(store.snapshot(), MIXED, query({ text: "alpha beta", vector }));
    const union = oracleHybrid({ rows: mixedRows, lexical, query: vector, weight: 0.4 }).length;
    expect(lexical.length).toBeLessThan(VECTOR_CANDIDATES);
    expect(union).toBeGreaterThan(VECTOR_CANDIDATES);
    expect(ranking.ranked.count).toBe(union);
    expect(ranking.estimate).toEqual({ total: VECTOR_CANDIDATES, exact: false });
    expect(ranking.whole).toBe(true);
    // a query whose matches are all among the nearest: the union is the 250 nearest, exact
    const onlyNearest = await rankRows(store.snapshot(), MIXED, query({ text: "w0", vector: mixedRows[0]?.vector as Float32Array }));
    expect(onlyNearest.ranked.count).toBe(VECTOR_CANDIDATES);
    expect(onlyNearest.estimate).toEqual({ total: VECTOR_CANDIDATES, exact: true });
    expect(onlyNearest.ranked.top(1)[0]?.id).toBe("m000");
  });

  it("rescores only the first 1,000 lexical matches, by score and then id, when more match", async () => {
    const lexical = await lexicalMatches(SAME, "gamma");
    expect(lexical.length).toBe(sameRows.length);
    const vector = randomVector(seeded(3), DIMENSION);
    const expected = oracleHybrid({ rows: sameRows, lexical, query: vector, weight: 0.4 });
    // (the matches past the first 1,000 ids that are not among the nearest have no vector part)
    const unscored = expected.filter((item) => item.id >= `s${LEXICAL_RESCORE_DEPTH}` && Math.abs(item.score - 0.6) < 1e-12);
    expect(unscored.length).toBeGreaterThan(150);
    for (const lexicalPart of [undefined, readAhead]) {
      const snapshot = store.snapshot();
      const q = query({ text: "gamma", vector, ...(lexicalPart ? { lexical: lexicalPart(snapshot, SAME, "gamma") } : {}) });
      expectSameRanking(all(await rankRows(snapshot, SAME, q)), expected);
    }
  });

  it("a query without terms (quotes only) ranks the nearest alone", async () => {
    const vector = randomVector(seeded(4), DIMENSION);
    const expected = oracleHybrid({ rows: mixedRows, lexical: [], query: vector, weight: 0.4 });
    const snapshot = store.snapshot();
    const ranking = await rankRows(snapshot, MIXED, query({ text: '""', vector, lexical: readAhead(snapshot, MIXED, '""') }));
    expectSameRanking(all(ranking), expected);
    expect(ranking.estimate).toEqual({ total: VECTOR_CANDIDATES, exact: true });
  });

  it("with a filter, ranks only the rows it leaves, each of them", async () => {
    const where = "seq <= 40";
    const rows = mixedRows.filter((row) => row.seq <= 40);
    const vector = randomVector(seeded(5), DIMENSION);
    const lexical = await lexicalMatches(MIXED, "alpha", where);
    const ranking = await rankRows(store.snapshot(), MIXED, query({ text: "alpha", vector, where, filtered: 40 }));
    expectSameRanking(all(ranking), oracleHybrid({ rows, lexical, query: vector, weight: 0.4, candidates: 40 }), 6);
    expect(ranking.estimate).toEqual({ total: 40, exact: true });
  });

  it("keeps at most `depth` candidates (highlight segments), best first", async () => {
    const vector = randomVector(seeded(6), DIMENSION);
    const ranking = await rankRows(store.snapshot(), MIXED, query({ text: "alpha beta", vector }), 20);
    expect(ranking.ranked.count).toBe(20);
    const top = all(ranking);
    expect([...top].sort(compareRanked)).toEqual(top);
  });
});

describe("at 10,000 results (MAX_RESULTS)", () => {
  // 10,100 rows: 9,900 "delta epsilon", 100 "delta", 100 "delta" in a longer text (a lower BM25
  // score); the last 200 near one direction `c`, the others anywhere.
  const BIG = "big";
  const c = Float32Array.of(1, 0, 0, 0, 0, 0, 0, 0);
  const bigRows: IndexRow[] = (() => {
    const random = seeded(13);
    return Array.from({ length: 10_100 }, (_, i) => ({
      id: `b${String(i).padStart(5, "0")}`,
      seq: i + 1,
      text: i < 9_900 ? "delta epsilon" : i < 10_000 ? "delta" : "delta filler filler filler filler",
      vector: i < 9_900 ? randomVector(random, DIMENSION) : c.map((x) => x + (random() - 0.5) * 0.01),
    }));
  })();
  beforeAll(async () => {
    await indexTable(store, BIG, bigRows, DIMENSION);
    await store.optimizeIndexTable(BIG);
  }, 120_000);

  it("hybrid: 10,000 lexical matches are cut there (more exist): the total is a minimum, the list not whole, though the union is 10,000", async () => {
    // the nearest to -c are all among the 10,000 best lexical matches
    const ranking = await rankRows(store.snapshot(), BIG, query({ text: "delta", vector: c.map((x) => -x) }));
    expect(ranking.ranked.count).toBe(MAX_RESULTS);
    expect(ranking.estimate).toEqual({ total: MAX_RESULTS, exact: false });
    expect(ranking.whole).toBe(false);
    expect(all(ranking).some((item) => item.id >= "b10000")).toBe(false);
  });

  it("hybrid: fewer lexical matches than 10,000, but a union past it: the list is cut, not whole", async () => {
    // 9,900 match "epsilon"; the 250 nearest to c hold the 200 rows that do not
    const ranking = await rankRows(store.snapshot(), BIG, query({ text: "epsilon", vector: c }));
    expect(ranking.ranked.count).toBe(MAX_RESULTS);
    expect(ranking.estimate).toEqual({ total: 9_900, exact: false });
    expect(ranking.whole).toBe(false);
  });

  it("lexical: 10,000 matches are a minimum", async () => {
    const ranking = await rankRows(store.snapshot(), BIG, query({ mode: "lexical", text: "delta", vector: c }));
    expect(ranking.ranked.count).toBe(MAX_RESULTS);
    expect(ranking.estimate).toEqual({ total: MAX_RESULTS, exact: false });
    expect(ranking.whole).toBe(false);
  });
});

describe("a small filtered set (rule 9) ends at 1,000 rows", () => {
  const vector = randomVector(seeded(8), DIMENSION);

  it.each(["hybrid", "vector"] as const)("%s: 1,000 rows left are ranked whole and counted exactly", async (mode) => {
    expect(SMALL_FILTERED_SET).toBe(1000);
    const where = "seq <= 1000";
    expect(await store.countRows(SAME, where)).toBe(1000);
    // (no lexical match: a hybrid list is the vector part alone)
    const ranking = await rankRows(store.snapshot(), SAME, query({ mode, text: "nothing", vector, where, filtered: 1000 }));
    expect(ranking.ranked.count).toBe(1000);
    expect(ranking.estimate).toEqual({ total: 1000, exact: true });
    expect(ranking.whole).toBe(true);
  });

  it.each(["hybrid", "vector"] as const)("%s: 1,001 rows left are not a small set: the first 250 nearest", async (mode) => {
    const where = "seq <= 1001";
    const ranking = await rankRows(store.snapshot(), SAME, query({ mode, text: "nothing", vector, where, filtered: 1001 }));
    expect(ranking.ranked.count).toBe(VECTOR_CANDIDATES);
    expect(ranking.estimate.total).toBe(VECTOR_CANDIDATES);
    const nearest = sameRows.filter((row) => row.seq <= 1001).map((row) => ({ id: row.id, score: cosine(vector, row.vector) })).sort(compareRanked);
    expect(all(ranking).map((item) => item.id)).toEqual(nearest.slice(0, VECTOR_CANDIDATES).map((item) => item.id));
  });
});

describe("the exact total of a filtered set", () => {
  it("is the ranking's count when it holds fewer rows than the filter leaves (lexical: four of the five rows left match)", async () => {
    // "alpha" is in m000, m003, m006 and m009 (seq 1, 4, 7, 10); the filter leaves them and m001
    const where = "seq IN (1, 4, 7, 10, 2)";
    expect(await store.countRows(MIXED, where)).toBe(5);
    const ranking = await rankRows(store.snapshot(), MIXED, query({ mode: "lexical", text: "alpha", vector: new Float32Array(DIMENSION), where, filtered: 5 }));
    expect(ranking.ranked.count).toBe(4);
    expect(ranking.estimate).toEqual({ total: 4, exact: true });
  });
});

describe("rankRows, neural-only paging", () => {
  const vector = randomVector(seeded(9), DIMENSION);
  const nearest = mixedRows.map((row) => ({ id: row.id, score: cosine(vector, row.vector) })).sort(compareRanked);

  it("fetches the first 250, then enough for the next page; whole and exact once fewer come back than were asked for", async () => {
    const first = await rankRows(store.snapshot(), MIXED, query({ mode: "vector", text: "", vector }));
    expect(first.ranked.count).toBe(VECTOR_CANDIDATES);
    expect(first.estimate).toEqual({ total: VECTOR_CANDIDATES, exact: false });
    expect(first.whole).toBe(false);
    // offset 280, limit 10: 300 asked for, 300 there: the end is not known yet
    const full = await rankRows(store.snapshot(), MIXED, query({ mode: "vector", text: "", vector, offset: 280, limit: 10 }));
    expect(full.ranked.count).toBe(300);
    expect(full.estimate).toEqual({ total: VECTOR_CANDIDATES, exact: false });
    expect(full.whole).toBe(false);
    const past = await rankRows(store.snapshot(), MIXED, query({ mode: "vector", text: "", vector, offset: 290, limit: 10 }));
    expect(past.estimate).toEqual({ total: 300, exact: true });
    expect(past.whole).toBe(true);
    // every page slices one list
    expect(all(past).map((item) => item.id)).toEqual(nearest.map((item) => item.id));
    expect(all(first)).toEqual(all(past).slice(0, VECTOR_CANDIDATES));
  });

  it("takes rows past the first 250 from the exact list, less those listed, up to the window: whatever the approximate index listed", async () => {
    // An approximate index (as HNSW may) lists as its 250th a row the exact scan ranks last of all.
    const snapshot = store.snapshot();
    const exact = tableVectors(snapshot, MIXED);
    const farthest = nearest.at(-1) as ScoredId;
    const approximate: VectorSource = {
      async nearest(v, limit, where, isExact) {
        const rows = await exact.nearest(v, limit, where, isExact);
        if (isExact || limit < VECTOR_CANDIDATES) return rows;
        return { ids: [...rows.ids.slice(0, -1), farthest.id], scores: Float64Array.of(...rows.scores.slice(0, -1), farthest.score) };
      },
      similarities: exact.similarities,
    };
    const ranking = await rankRows(snapshot, MIXED, query({ mode: "vector", text: "", vector, offset: 250, limit: 10 }), undefined, approximate);
    const head = [...nearest.slice(0, VECTOR_CANDIDATES - 1), farthest];
    const rest = nearest.filter((item) => !head.includes(item)).slice(0, 270 - VECTOR_CANDIDATES);
    expect(ranking.ranked.count).toBe(270);
    expect(all(ranking).map((item) => item.id)).toEqual([...head, ...rest].map((item) => item.id));
  });

  it("a ranking of highlight segments takes `depth` rows, whatever the page", async () => {
    const ranking = await rankRows(store.snapshot(), MIXED, query({ mode: "vector", text: "", vector, offset: 280, limit: 10 }), 30);
    expect(all(ranking).map((item) => item.id)).toEqual(nearest.slice(0, 30).map((item) => item.id));
  });
});

describe("bestImageVectors", () => {
  it("ranks objects by their best image, reading further when one object's images crowd the nearest", async () => {
    const images = "images";
    await store.createSegmentTable(images, DIMENSION, null);
    const random = seeded(10);
    const vector = randomVector(random, DIMENSION);
    const near = (k: number) => vector.map((x, i) => x + (i === k % DIMENSION ? 0.001 * (k + 1) : 0));
    const rows: SegmentRow[] = [];
    const image = (objectId: string, position: number, v: Float32Array): SegmentRow => ({
      id: JSON.stringify([objectId, "pics", position]),
      object_id: objectId,
      seq: rows.length + 1,
      field: "pics",
      position,
      start_char: 0,
      end_char: 0,
      text: `${objectId}-${position}.png`,
      vector: v,
    });
    // "crowd" has 40 images nearer than any other object's
    for (let k = 0; k < 40; k++) rows.push(image("crowd", k, near(k)));
    for (let o = 0; o < 20; o++) for (let k = 0; k < 3; k++) rows.push(image(`o${String(o).padStart(2, "0")}`, k, randomVector(random, DIMENSION)));
    await store.replaceSegments(images, [...new Set(rows.map((row) => row.object_id))], rows);
    const best = new Map<string, number>();
    for (const row of rows) best.set(row.object_id, Math.max(best.get(row.object_id) ?? -Infinity, cosine(vector, row.vector)));
    const expected = [...best].map(([id, score]) => ({ id, score })).sort(compareRanked);
    const source = bestImageVectors(store.snapshot(), images);
    const top = scoredIds(await source.nearest(vector, 5, undefined, false));
    expectSameRanking(top, expected.slice(0, 5), 6);
    const every = scoredIds(await source.nearest(vector, 100, undefined, false));
    expectSameRanking(every, expected, 6);
    const some = await source.similarities(vector, { ids: ["o03", "crowd", "none"], scores: new Float64Array(3) });
    expect(some[0]).toBeCloseTo(best.get("o03") as number, 6);
    expect(some[1]).toBeCloseTo(best.get("crowd") as number, 6);
    expect(some[2]).toBeNaN();
  });
});
