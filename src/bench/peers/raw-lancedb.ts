/** Raw LanceDB: the same table shape semsearch uses, LanceDB's own hybrid query (FTS + vector, RRF). */
import * as lancedb from "@lancedb/lancedb";
import { row, type BenchCorpus } from "../corpus.js";
import { dirSize } from "./size.js";
import type { PeerAdapter } from "./adapter.js";

export function rawLanceDb(): PeerAdapter {
  let table: lancedb.Table | undefined;
  let db: lancedb.Connection | undefined;
  return {
    name: "raw LanceDB",
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
    },
    async search(query, vector, k) {
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
