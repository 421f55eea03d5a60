/**
 * Raw LanceDB: the same table shape semsearch uses, LanceDB's own hybrid query (FTS + vector, RRF).
 * As a user would start: a full-text index and exact vector search; with `hnsw`, also the vector
 * index semsearch builds from VECTOR_INDEX_MIN_ROWS rows on (the like-for-like comparison). With
 * `lexicalDepth`, the search is only the lexical query the spec's `total` makes semsearch run (its
 * top 10,000 matches, row ids and scores): a floor under semsearch's hybrid search, no vector needed.
 */
import * as lancedb from "@lancedb/lancedb";
import { row, type BenchCorpus } from "../corpus.js";
import { VECTOR_INDEX_MIN_ROWS } from "../../engine/store/lance-store.js";
import { dirSize } from "./size.js";
import type { PeerAdapter } from "./adapter.js";

export function rawLanceDb(options: { hnsw?: boolean; lexicalDepth?: number } = {}): PeerAdapter {
  let table: lancedb.Table | undefined;
  let db: lancedb.Connection | undefined;
  const depth = options.lexicalDepth;
  return {
    name: depth ? `LanceDB ${depth.toLocaleString("en")} lexical` : options.hnsw ? "raw LanceDB + HNSW" : "raw LanceDB",
    ...(depth ? { usesQueryVector: false } : {}),
    async ingest(corpus: BenchCorpus, dir: string) {
      db = await lancedb.connect(dir);
      const batch = 2000;
      for (let start = 0; start < corpus.docs.length; start += batch) {
        const rows = corpus.docs.slice(start, start + batch).map((doc, i) => ({
          id: doc.id,
          text: doc.text,
          vector: Array.from(row(corpus.vectors, corpus.dimension, start + i)),
        }));
        if (!table) table = await db.createTable("docs", rows);
        else await table.add(rows);
      }
      await table?.createIndex("text", { config: lancedb.Index.fts({ withPosition: false }) });
      if (options.hnsw && corpus.docs.length >= VECTOR_INDEX_MIN_ROWS) {
        await table?.createIndex("vector", { config: lancedb.Index.hnswSq({ distanceType: "cosine", numPartitions: 1 }) });
      }
    },
    async search(query, vector, k) {
      if (depth) {
        const rows = await (table as lancedb.Table).query().fullTextSearch(query).select(["_score"]).withRowId().limit(depth).toArrow();
        return Array.from({ length: Math.min(k, rows.numRows) }, (_, i) => String(rows.getChild("_rowid")?.get(i)));
      }
      const rows = await (table as lancedb.Table)
        .query()
        .fullTextSearch(query)
        .nearestTo(Array.from(vector))
        .distanceType("cosine")
        .select(["id"])
        .limit(k)
        .toArray();
      return rows.map((r) => String(r.id));
    },
    async size(dir) {
      return dirSize(dir);
    },
    async close() {
      db?.close();
    },
  };
}
