/** Orama: in-memory hybrid (BM25 + vector) search; size is its serialised form. */
import { create, insertMultiple, search, save, type AnyOrama } from "@orama/orama";
import { row, type BenchCorpus } from "../corpus.js";
import type { PeerAdapter } from "./adapter.js";

export function orama(): PeerAdapter {
  let db: AnyOrama | undefined;
  return {
    name: "Orama (hybrid)",
    async ingest(corpus: BenchCorpus) {
      db = create({ schema: { id: "string", text: "string", embedding: `vector[${corpus.dimension}]` } as const });
      const docs = corpus.docs.map((doc, i) => ({ id: doc.id, text: doc.text, embedding: Array.from(row(corpus.vectors, corpus.dimension, i)) }));
      await insertMultiple(db, docs, 1000);
    },
    async search(query, vector, k) {
      const result = await search(db as AnyOrama, {
        mode: "hybrid",
        term: query,
        vector: { value: Array.from(vector), property: "embedding" },
        similarity: 0,
        limit: k,
      } as never);
      return result.hits.map((hit) => String(hit.id));
    },
    async size() {
      try {
        return Buffer.byteLength(JSON.stringify(save(db as AnyOrama)));
      } catch (error) {
        // At 100,000 objects its serialised form is longer than V8's longest string: no size, the rest stands.
        if (error instanceof RangeError) return Number.NaN;
        throw error;
      }
    },
    async close() {},
  };
}
