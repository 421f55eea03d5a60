/** What the peer benchmark asks of each engine. */
import type { BenchCorpus } from "../corpus.js";

export interface PeerAdapter {
  name: string;
  /** false: its search needs no query vector, so the report adds no embedding time to it */
  usesQueryVector?: boolean;
  /** Stores every doc with its precomputed vector and builds whatever indexes the engine has. */
  ingest(corpus: BenchCorpus, dir: string): Promise<void>;
  /** Top-k ids for a query (text and its precomputed vector). */
  search(query: string, vector: Float32Array, k: number): Promise<string[]>;
  /** Bytes the engine keeps on disk (or its serialised size, for in-memory engines). */
  size(dir: string): Promise<number>;
  close(): Promise<void>;
}
