/**
 * The peer table adds the model's time to engines handed precomputed vectors: the time measured in
 * the same run (npm run bench measures it on a sample of the corpus), never the time the cached
 * embeddings once took, which said how busy the machine was when the cache was built.
 */
import { describe, expect, it } from "vitest";
import { withModelTime } from "../../../src/bench/peers-report.js";

const raw = { engine: "x", ingest_s: 10, search_p50_ms: 5, search_p95_ms: 9, queries_run: 50, peak_rss_mb: 100, worker_peak_rss_mb: null, disk_mb: 1, uses_query_vector: true };

describe("withModelTime", () => {
  it("adds the measured corpus and query times to an engine given vectors", () => {
    expect(withModelTime("lancedb", raw, { embedSeconds: 120, queryEmbedMs: 2 })).toMatchObject({ ingest_with_embedding_s: 130, search_with_embedding_p50_ms: 7, search_with_embedding_p95_ms: 11 });
  });

  it("adds nothing to semsearch, which embeds end to end, and no query time to a lexical engine", () => {
    expect(withModelTime("semsearch", raw, { embedSeconds: 120, queryEmbedMs: 2 })).toMatchObject({ ingest_with_embedding_s: 10, search_with_embedding_p50_ms: 5 });
    expect(withModelTime("minisearch", { ...raw, uses_query_vector: false }, { embedSeconds: 120, queryEmbedMs: 2 })).toMatchObject({ ingest_with_embedding_s: 130, search_with_embedding_p50_ms: 5 });
  });
});
