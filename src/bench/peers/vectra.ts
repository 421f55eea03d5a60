/**
 * vectra: a file-backed vector index. Its hybrid mode (BM25 beside the vectors) reads each item's
 * text from `<documentId>.txt` in the index folder and rebuilds its BM25 engine on every query.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { LocalIndex } from "vectra";
import { row, type BenchCorpus } from "../corpus.js";
import { dirSize } from "./size.js";
import type { PeerAdapter } from "./adapter.js";

export function vectra(): PeerAdapter {
  let index: LocalIndex | undefined;
  return {
    name: "vectra (hybrid)",
    async ingest(corpus: BenchCorpus, dir: string) {
      index = new LocalIndex(dir);
      await index.createIndex();
      await index.beginUpdate();
      for (let i = 0; i < corpus.docs.length; i++) {
        const doc = corpus.docs[i] as { id: string; text: string };
        await writeFile(path.join(dir, `${doc.id}.txt`), doc.text);
        await index.insertItem({
          id: doc.id,
          vector: Array.from(row(corpus.vectors, corpus.dimension, i)),
          metadata: { documentId: doc.id, startPos: 0, endPos: doc.text.length - 1 },
        });
      }
      await index.endUpdate();
    },
    async search(query, vector, k) {
      const results = await (index as LocalIndex).queryItems(Array.from(vector), query, k, undefined, true);
      return results.map((r) => r.item.id);
    },
    async size(dir) {
      return dirSize(dir);
    },
    async close() {},
  };
}
