/**
 * Hugging Face embedding models semsearch knows how to use well: their pooling, normalisation,
 * query and document prefixes, window and dimension, as their model cards prescribe. Any other
 * ONNX feature-extraction model works too, with settings read from its config (mean pooling, no
 * prefixes) and a warning. Pure data.
 */
import type { Pooling } from "./model-spec.js";

export interface KnownModel {
  id: string;
  dimension: number;
  pooling: Pooling;
  normalize: boolean;
  query_prefix: string;
  document_prefix: string;
  /** Tokens the model was trained on, special tokens included. */
  window: number;
  languages: string;
  /** Published SciFact test nDCG@10 (MTEB / model card), where known. */
  scifact?: number;
  /** `clip`: an image-text model, for image indexes (its pooling and prefixes do not apply). */
  kind?: "clip";
}

const BGE_QUERY = "Represent this sentence for searching relevant passages: ";

function model(id: string, dimension: number, pooling: Pooling, window: number, extra: Partial<KnownModel> = {}): KnownModel {
  return { id, dimension, pooling, normalize: true, query_prefix: "", document_prefix: "", window, languages: "English", ...extra };
}

export const KNOWN_MODELS: readonly KnownModel[] = [
  model("Xenova/all-MiniLM-L6-v2", 384, "mean", 256, { scifact: 0.645 }),
  model("Xenova/all-MiniLM-L12-v2", 384, "mean", 256),
  model("Xenova/all-mpnet-base-v2", 768, "mean", 384),
  model("Xenova/paraphrase-multilingual-MiniLM-L12-v2", 384, "mean", 128, { languages: "50+ languages" }),
  model("Xenova/bge-small-en-v1.5", 384, "cls", 512, { query_prefix: BGE_QUERY, scifact: 0.72 }),
  model("Xenova/bge-base-en-v1.5", 768, "cls", 512, { query_prefix: BGE_QUERY, scifact: 0.741 }),
  model("Xenova/bge-large-en-v1.5", 1024, "cls", 512, { query_prefix: BGE_QUERY }),
  model("Xenova/gte-small", 384, "mean", 512),
  model("Xenova/gte-base", 768, "mean", 512),
  model("Xenova/e5-small-v2", 384, "mean", 512, { query_prefix: "query: ", document_prefix: "passage: " }),
  model("Xenova/e5-base-v2", 768, "mean", 512, { query_prefix: "query: ", document_prefix: "passage: " }),
  model("Xenova/multilingual-e5-small", 384, "mean", 512, { query_prefix: "query: ", document_prefix: "passage: ", languages: "~100 languages" }),
  model("Xenova/multilingual-e5-base", 768, "mean", 512, { query_prefix: "query: ", document_prefix: "passage: ", languages: "~100 languages" }),
  model("nomic-ai/nomic-embed-text-v1.5", 768, "mean", 2048, { query_prefix: "search_query: ", document_prefix: "search_document: " }),
  model("Xenova/nomic-embed-text-v1.5", 768, "mean", 2048, { query_prefix: "search_query: ", document_prefix: "search_document: " }),
  model("mixedbread-ai/mxbai-embed-large-v1", 1024, "cls", 512, { query_prefix: BGE_QUERY }),
  model("Snowflake/snowflake-arctic-embed-xs", 384, "cls", 512, { query_prefix: BGE_QUERY }),
  model("Xenova/clip-vit-base-patch32", 512, "cls", 77, { kind: "clip" }),
  model("Xenova/clip-vit-base-patch16", 512, "cls", 77, { kind: "clip" }),
  model("Xenova/clip-vit-large-patch14", 768, "cls", 77, { kind: "clip" }),
];

/** The known model with this id (case-insensitive, as the hub treats ids), or undefined. */
export function knownModel(id: string): KnownModel | undefined {
  const lower = id.toLowerCase();
  return KNOWN_MODELS.find((known) => known.id.toLowerCase() === lower);
}
