/** semsearch itself, through its engine: ingest embeds with its own worker (end to end). */
import { Engine } from "../../engine/index.js";
import type { BenchCorpus } from "../corpus.js";
import { dirSize } from "./size.js";
import type { PeerAdapter } from "./adapter.js";

export function semsearch(): PeerAdapter {
  let engine: Engine | undefined;
  let indexId = "";
  return {
    name: "semsearch (engine)",
    async ingest(corpus: BenchCorpus, dir: string) {
      engine = new Engine({ projectDir: dir });
      await engine.addObjects([{ text: corpus.docs.map((doc) => JSON.stringify(doc)).join("\n"), source: "bench" }]);
      indexId = (await engine.createIndex({ configuration: { index_type: { name: "text" } } })).id;
      await engine.waitForIndex(indexId);
    },
    async search(query, _vector, k) {
      // As the HTTP API and --json ask: no snippet text (the peers return ids too).
      return (await (engine as Engine).search(indexId, { query, limit: k, snippets: false })).hits.map((hit) => hit.id);
    },
    async size(dir) {
      return dirSize(dir);
    },
    async close() {
      await engine?.close();
    },
  };
}
