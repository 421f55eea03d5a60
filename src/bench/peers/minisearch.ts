/** MiniSearch: in-memory lexical (BM25+) search only; size is its serialised form. */
import MiniSearch from "minisearch";
import type { BenchCorpus } from "../corpus.js";
import type { PeerAdapter } from "./adapter.js";

export function miniSearch(): PeerAdapter {
  let ms: MiniSearch | undefined;
  return {
    name: "MiniSearch (lexical)",
    async ingest(corpus: BenchCorpus) {
      ms = new MiniSearch({ fields: ["text"], idField: "id" });
      ms.addAll(corpus.docs);
    },
    async search(query, _vector, k) {
      return (ms as MiniSearch).search(query).slice(0, k).map((r) => String(r.id));
    },
    async size() {
      return Buffer.byteLength(JSON.stringify(ms));
    },
    async close() {},
  };
}
