/**
 * Loaders for the evaluation collections in ../shared/eval (read in place, never copied):
 * BEIR SciFact, Cranfield 1400 and CISI; and the project's own `ranking` collection
 * (fixtures/ranking: notes and products with everyday queries, typos among them, written for it).
 * Each becomes documents, queries and graded judgments.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export interface EvalDocument {
  id: string;
  title: string;
  text: string;
  /** Image collections: the absolute path of the document's image (searched by image, not text). */
  image?: string;
}

export interface EvalQuery {
  id: string;
  text: string;
}

/** query id → (document id → gain > 0) */
export type Qrels = Map<string, Map<string, number>>;

export interface Collection {
  name: string;
  documents: EvalDocument[];
  queries: EvalQuery[];
  qrels: Qrels;
}

export const COLLECTIONS = ["scifact", "cranfield", "cisi", "ranking"] as const;
/** Image collections: not in the default run (they need a CLIP model, which is downloaded or a folder). */
export const IMAGE_COLLECTIONS = ["coco-mini"] as const;
export type CollectionName = (typeof COLLECTIONS)[number];

function addJudgment(qrels: Qrels, query: string, doc: string, gain: number): void {
  if (!(gain > 0)) return;
  let docs = qrels.get(query);
  if (!docs) qrels.set(query, (docs = new Map()));
  docs.set(doc, gain);
}

/** Only the queries that have judgments. */
function judged(queries: EvalQuery[], qrels: Qrels): EvalQuery[] {
  return queries.filter((query) => qrels.has(query.id));
}

/** SciFact (BEIR): documents are title + text; `split` picks the judgments (tune on train, report on test). */
export function loadSciFact(dir: string, split: "test" | "train" = "test"): Collection {
  const lines = (file: string) => readFileSync(path.join(dir, file), "utf8").split("\n").filter((line) => line.trim() !== "");
  const documents = lines("corpus.jsonl").map((line) => {
    const row = JSON.parse(line) as { _id: string; title: string; text: string };
    return { id: row._id, title: row.title, text: row.text };
  });
  const queries = lines("queries.jsonl").map((line) => {
    const row = JSON.parse(line) as { _id: string; text: string };
    return { id: row._id, text: row.text };
  });
  const qrels: Qrels = new Map();
  for (const line of lines(`qrels/${split}.tsv`).slice(1)) {
    const [query, doc, score] = line.trim().split("\t");
    addJudgment(qrels, query as string, doc as string, Number(score));
  }
  return { name: split === "test" ? "scifact" : "scifact-train", documents, queries: judged(queries, qrels), qrels };
}

/** Records of a SMART-format file: `.I id` then `.X` field markers. */
export function parseSmart(text: string): { id: string; fields: Record<string, string> }[] {
  const records: { id: string; fields: Record<string, string> }[] = [];
  let field = "";
  for (const line of text.split(/\r?\n/)) {
    const marker = /^\.([A-Z])(?:\s+(.*))?$/.exec(line);
    if (marker) {
      if (marker[1] === "I") {
        records.push({ id: String(Number(marker[2])), fields: {} });
        field = "";
      } else field = marker[1] as string;
      continue;
    }
    const record = records.at(-1);
    if (record && field) record.fields[field] = `${record.fields[field] ?? ""}${line.trim()} `;
  }
  for (const record of records) for (const key of Object.keys(record.fields)) record.fields[key] = (record.fields[key] as string).trim();
  return records;
}

const CRANFIELD_GAIN: Record<string, number> = { "1": 4, "2": 3, "3": 2, "4": 1 };

/** Cranfield: qrels number queries 1..225 in file order; grades 1..4 become gains 4..1, -1 is dropped. */
export function loadCranfield(dir: string): Collection {
  const documents = parseSmart(readFileSync(path.join(dir, "cran.all.1400"), "utf8")).map((r) => ({
    id: r.id,
    title: r.fields.T ?? "",
    text: r.fields.W ?? "",
  }));
  const queries = parseSmart(readFileSync(path.join(dir, "cran.qry"), "utf8")).map((r, i) => ({ id: String(i + 1), text: r.fields.W ?? "" }));
  const qrels: Qrels = new Map();
  for (const line of readFileSync(path.join(dir, "cranqrel"), "utf8").split("\n")) {
    const [query, doc, grade] = line.trim().split(/\s+/);
    if (query && doc && grade) addJudgment(qrels, query, doc, CRANFIELD_GAIN[grade] ?? 0);
  }
  return { name: "cranfield", documents, queries: judged(queries, qrels), qrels };
}

/** CISI: binary judgments for 76 of its 112 queries. */
export function loadCisi(dir: string): Collection {
  const documents = parseSmart(readFileSync(path.join(dir, "CISI.ALL"), "utf8")).map((r) => ({
    id: r.id,
    title: r.fields.T ?? "",
    text: r.fields.W ?? "",
  }));
  const queries = parseSmart(readFileSync(path.join(dir, "CISI.QRY"), "utf8")).map((r) => ({
    id: r.id,
    text: [r.fields.T, r.fields.W].filter(Boolean).join(" "),
  }));
  const qrels: Qrels = new Map();
  for (const line of readFileSync(path.join(dir, "CISI.REL"), "utf8").split("\n")) {
    const [query, doc] = line.trim().split(/\s+/);
    if (query && doc) addJudgment(qrels, query, doc, 1);
  }
  return { name: "cisi", documents, queries: judged(queries, qrels), qrels };
}

/**
 * coco-mini-cc: 51 COCO photos (both splits as one gallery), each with 5 human captions. Every
 * caption is a query whose one relevant document is its photo (caption → image retrieval).
 */
export function loadCocoMini(dir: string): Collection {
  const documents: EvalDocument[] = [];
  const queries: EvalQuery[] = [];
  const qrels: Qrels = new Map();
  for (const split of ["train2017", "val2017"]) {
    const file = JSON.parse(readFileSync(path.join(dir, "annotations", `captions_${split}.json`), "utf8")) as {
      images: { id: number; file_name: string }[];
      annotations: { id: number; image_id: number; caption: string }[];
    };
    for (const image of file.images) documents.push({ id: String(image.id), title: "", text: "", image: path.join(dir, split, image.file_name) });
    for (const caption of file.annotations) {
      const id = `${split}-${caption.id}`;
      queries.push({ id, text: caption.caption.trim() });
      addJudgment(qrels, id, String(caption.image_id), 1);
    }
  }
  return { name: "coco-mini", documents, queries: judged(queries, qrels), qrels };
}

/** The project's own collection: fixtures/ranking (corpus.jsonl of {id, title, body}; queries.jsonl of {id, text, relevant: {doc: gain}}). */
export function loadRanking(dir = fileURLToPath(new URL("../../fixtures/ranking", import.meta.url))): Collection {
  const lines = (file: string) => readFileSync(path.join(dir, file), "utf8").split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as Record<string, unknown>);
  const documents = lines("corpus.jsonl").map((doc) => ({ id: String(doc.id), title: String(doc.title), text: String(doc.body) }));
  const qrels: Qrels = new Map();
  const queries: EvalQuery[] = [];
  for (const query of lines("queries.jsonl")) {
    queries.push({ id: String(query.id), text: String(query.text) });
    for (const [doc, gain] of Object.entries(query.relevant as Record<string, number>)) addJudgment(qrels, String(query.id), doc, gain);
  }
  return { name: "ranking", documents, queries: judged(queries, qrels), qrels };
}

export function loadCollection(name: CollectionName | "scifact-train" | "coco-mini", evalDir: string): Collection {
  switch (name) {
    case "ranking":
      return loadRanking();
    case "coco-mini":
      return loadCocoMini(path.join(evalDir, "coco-mini-cc"));
    case "scifact":
      return loadSciFact(path.join(evalDir, "scifact"), "test");
    case "scifact-train":
      return loadSciFact(path.join(evalDir, "scifact"), "train");
    case "cranfield":
      return loadCranfield(path.join(evalDir, "cranfield"));
    case "cisi":
      return loadCisi(path.join(evalDir, "cisi"));
  }
}
