/** Runs every peer engine in its own process on one corpus size and renders the comparison. */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const PEER_RUN = fileURLToPath(new URL("./peer-run.js", import.meta.url));
/** An engine that takes longer than this on one size is reported as timed out. */
const PEER_TIMEOUT_MS = 30 * 60_000;
export const PEERS = ["lancedb", "lancedb-hnsw", "lancedb-lexical", "semsearch", "orama", "vectra", "minisearch"] as const;

export interface PeerResult {
  engine: string;
  ingest_s: number;
  search_p50_ms: number;
  search_p95_ms: number;
  queries_run: number;
  peak_rss_mb: number;
  worker_peak_rss_mb: number | null;
  disk_mb: number;
  /** false: the engine's search needs no query vector (no embedding time is added to it) */
  uses_query_vector: boolean;
  /** ingest including embedding (semsearch measures it end to end; the others add the model's time) */
  ingest_with_embedding_s: number;
  /** search including query embedding */
  search_with_embedding_p50_ms: number;
  search_with_embedding_p95_ms: number;
}

export interface PeerRunOptions {
  engines: readonly string[];
  /** The model's time for the whole corpus, measured in this run, added to the ingest of the engines given vectors. */
  embedSeconds: number;
  /** The model's time for one query, added to the search of the engines given a query vector. */
  queryEmbedMs: number;
}

export function runPeers(size: number, queries: number, cacheDir: string, evalDir: string, { engines, embedSeconds, queryEmbedMs }: PeerRunOptions, log: (m: string) => void): PeerResult[] {
  const results: PeerResult[] = [];
  for (const peer of engines) {
    log(`  ${peer} on ${size} objects…`);
    const child = spawnSync(process.execPath, [PEER_RUN, peer, String(size), String(queries), cacheDir, evalDir], {
      encoding: "utf8",
      maxBuffer: 1 << 24,
      env: { ...process.env, LANCEDB_LOG: "off" },
      timeout: PEER_TIMEOUT_MS,
    });
    if (child.status !== 0) {
      // The error's own line (a stack's first), not only where it was thrown.
      const lines = child.stderr.trim().split("\n");
      const thrown = lines.find((line) => /^\w*Error\b|^Error:/.test(line.trim())) ?? "";
      const why = child.error ? child.error.message : `${thrown} ${lines.slice(-2).join(" ")}`.trim();
      log(`  ${peer} failed: ${why}`);
      continue;
    }
    results.push(withModelTime(peer, JSON.parse(child.stdout.trim().split("\n").at(-1) as string), { embedSeconds, queryEmbedMs }));
  }
  return results;
}

type RawResult = Omit<PeerResult, "ingest_with_embedding_s" | "search_with_embedding_p50_ms" | "search_with_embedding_p95_ms">;

/**
 * A peer's figures with the model's time added where the engine was handed vectors: the corpus's
 * embedding to its ingest, a query's to its searches (semsearch embeds for itself, end to end; a
 * lexical engine needs no query vector).
 */
export function withModelTime(peer: string, r: RawResult, { embedSeconds, queryEmbedMs }: Pick<PeerRunOptions, "embedSeconds" | "queryEmbedMs">): PeerResult {
  const own = peer === "semsearch";
  const query = own || r.uses_query_vector === false ? 0 : queryEmbedMs;
  return {
    ...r,
    ingest_with_embedding_s: own ? r.ingest_s : r.ingest_s + embedSeconds,
    search_with_embedding_p50_ms: r.search_p50_ms + query,
    search_with_embedding_p95_ms: r.search_p95_ms + query,
  };
}

function n(value: number | null, digits = 1): string {
  return value === null || !Number.isFinite(value) ? "—" : value.toFixed(digits);
}

export function renderPeers(size: number, results: PeerResult[]): string {
  const base = results.find((r) => r.engine === "raw LanceDB");
  const ratio = (value: number, baseValue: number | undefined) => (baseValue ? `${n(value / baseValue, 2)}×` : "–");
  const lines = [
    `${size} objects (ingest and search include embedding, but for the lexical query alone; ratios against raw LanceDB)`,
    "engine                 store s  ingest obj/s  ratio   search p50 ms  p95 ms  ratio   peak RSS MB  disk MB",
  ];
  for (const r of results) {
    const rss = r.worker_peak_rss_mb ? `${r.peak_rss_mb} + worker ${r.worker_peak_rss_mb}` : String(r.peak_rss_mb);
    lines.push(
      [
        r.engine.padEnd(22),
        n(r.ingest_s).padStart(7),
        n(size / r.ingest_with_embedding_s).padStart(13),
        ratio(size / r.ingest_with_embedding_s, base ? size / base.ingest_with_embedding_s : undefined).padStart(6),
        n(r.search_with_embedding_p50_ms).padStart(15),
        n(r.search_with_embedding_p95_ms).padStart(7),
        ratio(r.search_with_embedding_p50_ms, base?.search_with_embedding_p50_ms).padStart(6),
        rss.padStart(13),
        n(r.disk_mb).padStart(8),
      ].join(" "),
    );
  }
  return lines.join("\n") + "\n";
}
