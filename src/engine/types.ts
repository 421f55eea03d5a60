/** Records and result shapes shared by the engine, the CLI and (later) the HTTP server. */
import type { Tokenizer } from "./tokenizer.js";
import type { IndexConfiguration } from "./config.js";
import type { ModelSpec } from "./embedding/model-spec.js";
import type { Highlight, ImageHighlight, TextHighlight } from "./search/highlights.js";
import type { Warning } from "./errors.js";

export type { Highlight, ImageHighlight, TextHighlight };

/** A user object as given, unmodified. */
export type JsonObject = { [key: string]: unknown };

/** One entry of the index catalog. */
export interface IndexRecord {
  /** `idx_<opaque>` */
  id: string;
  /** A unique name given at creation, usable wherever the id is. */
  name?: string;
  configuration: IndexConfiguration;
  /** Embedding model id, e.g. `use-lite-512`, `Xenova/bge-small-en-v1.5`, or a model folder. */
  model: string;
  /** Vector dimension of the model. */
  dimension: number;
  /**
   * Everything needed to embed queries exactly as the objects were: source, revision, dtype,
   * weights hash, pooling, prefixes, window. Absent in indexes of the bundled model created before
   * it was recorded.
   */
  embedding?: ModelSpec;
  /**
   * How the full-text part cuts words, as created (tokenizer.ts). Absent in neural-only indexes,
   * and in indexes created before it was recorded, which have DEFAULT_TOKENIZER.
   */
  tokenizer?: Tokenizer;
  /**
   * The Unicode form the index holds its text and string filter values in, and puts queries and
   * filter values in (text-form.ts). Absent in indexes created before, which hold text as given.
   */
  normalization?: "NFC";
  /** ISO 8601 creation time. */
  created_at: string;
}

/** Per-object processing state of one index. */
export type ObjectIndexState = "UPLOADED" | "PROCESSING" | "READY" | "ERROR";

/** Counts of objects per state, the shape of `index status`. */
export type IndexStatusCounts = Record<ObjectIndexState, number>;

/** Index-level lifecycle: BUILDING while any object is UPLOADED or PROCESSING, READY otherwise. */
export type IndexState = "BUILDING" | "READY";

export interface IndexInfo extends IndexRecord {
  state: IndexState;
  status: IndexStatusCounts;
  /** Present when the worker cannot build the index at all: its model is missing, changed or unreadable. */
  blocked?: { code: string; message: string };
}

/** A stored object with its metadata. */
export interface StoredObject {
  id: string;
  object: JsonObject;
  created_at: string;
  updated_at: string;
}

export interface ObjectIndexStatus {
  id: string;
  status: ObjectIndexState;
  /** True when the object is already found by search in this index. */
  searchable: boolean;
  error?: string;
}

export interface ObjectInfo extends StoredObject {
  status: {
    /** `incomplete` while any index has not finished processing the object; `complete` after. */
    state: "complete" | "incomplete";
    indexes: ObjectIndexStatus[];
  };
}

export interface PaginationNext {
  offset: number;
  limit: number;
}

/** Spec §2.7. */
export interface Pagination {
  pages: number;
  page: number;
  next?: PaginationNext;
  statistics: { total: number; total_calculation: "exact" | "minimum" };
}

/** One ranked result before rendering. */
export interface SearchHit {
  id: string;
  /** Fused relevance score, higher is better (not part of the service's JSON shape). */
  score: number;
  /** The object projected by `object_fields`. */
  object: JsonObject;
  /** The searchable text of the object, for snippets ("" when the search asked for no snippets). */
  text: string;
  /** Image indexes, for tables (with snippets): the best matching image, as a person may see it (no credentials, cut). */
  image?: string;
  /** Present when highlights were asked for: best first (in image indexes, images first, then text). */
  highlights?: Highlight[];
  /** `result_fields=score` (extension): the score that orders the results, in the JSON as `score`. */
  resultScore?: number;
  /** `result_fields=explain` (extension): what the score is made of. */
  explain?: ScoreExplanation;
}

/**
 * The parts of a result's score (`result_fields=explain`, extension). `ranking` says which score
 * orders the result: the hybrid fusion `(1 - semantic_ratio) * lexical.normalized + semantic_ratio *
 * vector.normalized` (a part the object has no score in counts 0 and is null), one part alone, or,
 * when highlights rank the results (spec §4.4), the best highlight's score.
 */
export interface ScoreExplanation {
  ranking: "hybrid" | "lexical" | "vector" | "highlight";
  /** BM25, and divided by the query's best BM25 */
  lexical?: { score: number; normalized: number } | null;
  /** cosine similarity, and min-max scaled over the candidates */
  vector?: { similarity: number; normalized: number } | null;
  semantic_ratio?: number;
  /** the fused score of the ranking without highlights */
  fused?: number;
  highlight?: { score: number };
}

export interface SearchPage {
  hits: SearchHit[];
  pagination: Pagination;
  /**
   * Present while the index is still building (not part of the service's JSON shape): objects
   * searchable so far, of all stored objects. Results may be incomplete until it is gone.
   */
  building?: { searchable: number; total: number };
  /** What a person should know about this search (not part of the service's JSON shape): a filter field or object field no object has. */
  warnings?: Warning[];
}
