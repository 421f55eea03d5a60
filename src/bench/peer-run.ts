/**
 * One engine of the peer benchmark, in its own process so that its peak memory is its own:
 *   node dist/bench/peer-run.js <engine> <size> <queries> <cache dir> <eval dir>
 * Prints one JSON line: ingest seconds, search latency percentiles, peak RSS, size on disk.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { loadCorpus, row } from "./corpus.js";
import type { PeerAdapter } from "./peers/adapter.js";
import { miniSearch } from "./peers/minisearch.js";
import { orama } from "./peers/orama.js";
import { rawLanceDb } from "./peers/raw-lancedb.js";
import { semsearch } from "./peers/semsearch.js";
import { vectra } from "./peers/vectra.js";
import { percentile, timed } from "./stats.js";
import { MAX_RESULTS } from "../engine/search/limits.js";

const SEARCH_BUDGET_MS = 60_000;
const ADAPTERS: Record<string, () => PeerAdapter> = {
  semsearch,
  lancedb: rawLanceDb,
  "lancedb-hnsw": () => rawLanceDb({ hnsw: true }),
  "lancedb-lexical": () => rawLanceDb({ lexicalDepth: MAX_RESULTS }),
  orama,
  vectra,
  minisearch: miniSearch,
};

/** Peak RSS (MB) the semsearch worker logged, if it ran. */
function workerPeakMb(dir: string): number | null {
  try {
    const peaks = [...readFileSync(path.join(dir, "worker.log"), "utf8").matchAll(/peak RSS (\d+) MB/g)].map((m) => Number(m[1]));
    return peaks.length ? Math.max(...peaks) : null;
  } catch {
    return null;
  }
}

const [name, size, queryCount, cacheDir, evalDir] = process.argv.slice(2) as [string, string, string, string, string];
const adapter = (ADAPTERS[name] as () => PeerAdapter)();
const corpus = await loadCorpus(Number(size), Number(queryCount), evalDir, cacheDir, () => {});
const dir = mkdtempSync(path.join(tmpdir(), `semsearch-peer-${name}-`));
try {
  const [, ingestMs] = await timed(() => adapter.ingest(corpus, dir));
  await adapter.search(corpus.queries[0] as string, row(corpus.queryVectors, corpus.dimension, 0), 10);
  const latencies: number[] = [];
  // Slow engines get a time budget: latency is reported over the queries that ran in it.
  const budgetEnd = performance.now() + SEARCH_BUDGET_MS;
  for (let i = 0; i < corpus.queries.length && performance.now() < budgetEnd; i++) {
    const [, ms] = await timed(() => adapter.search(corpus.queries[i] as string, row(corpus.queryVectors, corpus.dimension, i), 10));
    latencies.push(ms);
  }
  const result = {
    engine: adapter.name,
    uses_query_vector: adapter.usesQueryVector !== false,
    ingest_s: ingestMs / 1000,
    search_p50_ms: percentile(latencies, 50),
    search_p95_ms: percentile(latencies, 95),
    queries_run: latencies.length,
    peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
    worker_peak_rss_mb: workerPeakMb(dir),
    disk_mb: (await adapter.size(dir)) / 1e6,
  };
  await adapter.close();
  process.stdout.write(JSON.stringify(result) + "\n");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
