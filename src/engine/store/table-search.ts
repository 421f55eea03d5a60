/**
 * Searches of a searchable table (an index's, or a part table's as its segments are ranked like
 * objects): BM25 matches of its `text`, nearest `vector`s, and exact cosines of given rows. In a
 * snapshot the results carry LanceDB row ids, and vector search scores candidates on their stored
 * vectors (held in memory when the process holds them).
 */
import { numbers, plainRows, rowNumbers, strings } from "./arrow-columns.js";
import type { Tables } from "./database.js";
import { heldPositions } from "./held-vectors.js";
import type { ArrowTable } from "./lancedb.js";
import { byScore, cosines, NO_ROWS, reorderRows, type ScoredRows } from "./rows.js";
import { idChunks, sqlIn } from "./sql.js";

/**
 * BM25 matches of a query over the `text` column, as LanceDB lists them: mostly best first (rows
 * not yet in its full-text index come after the others), equal scores in no fixed order.
 */
export async function textSearch(tables: Tables, name: string, query: string, limit: number, where?: string): Promise<ScoredRows> {
  // LanceDB reads `"…"` as a phrase, which needs word positions the index does not keep (it fails
  // the search): quotes are not phrase syntax here, their words are matched as any others.
  const terms = query.replaceAll('"', " ");
  if (terms.trim() === "") return NO_ROWS;
  const table = await tables.table(name);
  return scoredRows(tables, name, `full-text search in ${name}`, "_score", (columns) => {
    const search = table.query().fullTextSearch(terms, { columns: "text" });
    const query = (where ? search.where(where) : search).select(columns).limit(limit);
    return (tables.snapshot ? query.withRowId() : query).toArrow();
  });
}

/** Terms a misspelt word is expanded to at most (LanceDB's default). */
const FUZZY_EXPANSIONS = 50;

/**
 * The prefix a fuzzy word keeps, in LanceDB's unit: bytes of the word's UTF-8, which LanceDB slices
 * without looking for a character boundary (`prefixLength: 1` on `éclair` panicked inside LanceDB,
 * exit 1). Its first letter when that is one byte (ASCII); none otherwise. (Words come with their
 * accents folded when the index folds them, search/typos.ts: `éclair` is looked up as `eclair`.)
 */
export function fuzzyPrefixLength(word: string): number {
  return word.charCodeAt(0) < 0x80 ? 1 : 0;
}

/**
 * BM25 matches of any of `words`, each within `fuzziness` edits of a word of the text (the first
 * letter kept when it is ASCII, see fuzzyPrefixLength: a typo there is rare, and keeping it makes the
 * expansion cheap), for typo tolerance (search/typos.ts). LanceDB compares each word with the
 * index's words as given: neither lower-cased, stemmed nor folded.
 */
export async function fuzzyTextSearch(tables: Tables, name: string, words: readonly { word: string; fuzziness: number }[], limit: number, where?: string): Promise<ScoredRows> {
  if (words.length === 0) return NO_ROWS;
  const table = await tables.table(name);
  const { BooleanQuery, MatchQuery, Occur } = tables.db.lance.lancedb;
  const fuzzy = new BooleanQuery(words.map(({ word, fuzziness }) => [Occur.Should, new MatchQuery(word, "text", { fuzziness, maxExpansions: FUZZY_EXPANSIONS, prefixLength: fuzzyPrefixLength(word) })]));
  return scoredRows(tables, name, `fuzzy full-text search in ${name}`, "_score", (columns) => {
    const search = table.query().fullTextSearch(fuzzy, { columns: "text" });
    const query = (where ? search.where(where) : search).select(columns).limit(limit);
    return (tables.snapshot ? query.withRowId() : query).toArrow();
  });
}

/**
 * Nearest rows by cosine similarity (score = 1 - cosine distance), best first; with `where`, among
 * the matching rows only (prefiltered). `exact` skips the approximate vector index: for a filter
 * that leaves few rows, scanning them is cheap and finds every one.
 */
export async function vectorSearch(tables: Tables, name: string, vector: Float32Array, limit: number, where?: string, exact = false): Promise<ScoredRows> {
  const table = await tables.table(name);
  // Through the index, distances are the quantised graph's (on another scale than an exact scan's):
  // the candidates are scored again on their stored vectors, so every score is an exact cosine. A
  // snapshot does it here, by row id (from the vectors held in memory when there are, see
  // vector-cache.ts), the same way as the rescoring of lexical matches; the store itself has LanceDB
  // refine them.
  const snapshot = exact ? undefined : tables.snapshot;
  const hits = await scoredRows(tables, name, `vector search in ${name}`, "_distance", (columns) => {
    let query = table.vectorSearch(Array.from(vector)).distanceType("cosine");
    if (where) query = query.where(where);
    if (exact) query = query.bypassVectorIndex();
    else if (!snapshot) query = query.refineFactor(1);
    query = query.select(columns).limit(limit);
    return (tables.snapshot ? query.withRowId() : query).toArrow();
  });
  if (!snapshot) return { ...hits, scores: hits.scores.map((distance) => 1 - distance) };
  // (rows without a stored vector are left out)
  const scores = cosines(vector, await snapshot.vectorsOfRows(name, hits));
  return reorderRows({ ...hits, scores }, byScore(scores));
}

/**
 * Runs a query scored by `scoreColumn` (it is given the columns to select), and reads its rows'
 * ids: from the vectors the snapshot's process holds for the table when it holds them (the query
 * then reads no id column: 10,000 ids cost a lexical query 0.7 ms at 10,000 objects, 2.6 ms at
 * 100,000), else from the query.
 */
async function scoredRows(tables: Tables, name: string, what: string, scoreColumn: "_score" | "_distance", run: (columns: string[]) => Promise<ArrowTable>): Promise<ScoredRows> {
  const held = tables.snapshot?.heldVectors(name);
  if (held) {
    const data = await tables.wrap(name, what, () => run([scoreColumn]));
    const rows = rowNumbers(data.getChild("_rowid"), data.numRows);
    // (the held vectors are of the version this snapshot reads: every row is among them)
    const positions = heldPositions(held, rows, rows.length);
    if (positions) return { ids: Array.from(positions, (at) => held.ids[at] as string), scores: numbers(data.getChild(scoreColumn), rows.length), rows };
  }
  const data = await tables.wrap(name, what, () => run(["id", scoreColumn]));
  const count = data.numRows;
  const hits = { ids: strings(data.getChild("id"), count), scores: numbers(data.getChild(scoreColumn), count) };
  return tables.snapshot ? { ...hits, rows: rowNumbers(data.getChild("_rowid"), count) } : hits;
}

/** Cosine similarity of `vector` to the rows of the given ids, by LanceDB (ids without a row are left out). */
export async function similarities(tables: Tables, name: string, vector: Float32Array, ids: readonly string[]): Promise<{ id: string; score: number }[]> {
  const table = await tables.table(name);
  const out: { id: string; score: number }[] = [];
  for (const part of idChunks(ids)) {
    const rows = await tables.wrap(name, `vector scoring in ${name}`, () =>
      table
        .vectorSearch(Array.from(vector))
        .distanceType("cosine")
        .where(sqlIn("id", part))
        .bypassVectorIndex()
        .select(["id", "_distance"])
        .limit(part.length)
        .toArrow().then(plainRows),
    );
    for (const row of rows) out.push({ id: String(row.id), score: 1 - Number(row._distance) });
  }
  return out;
}
