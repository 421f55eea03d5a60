/**
 * `npm run eval:tokenizers`: which tokenizer the full-text part should have by default. For each
 * collection and each tokenizer setting, a LanceDB full-text index over the same searchable text as
 * an index of the engine (title and text, one per line), built with the same options the engine
 * gives LanceDB (tokenizer.ts), answers every judged query; prints lexical nDCG@10 and R@100. Only
 * the lexical part changes with the tokenizer, so it is measured alone (and in a minute: no
 * embeddings). Chosen on SciFact train; the other collections have no training split.
 *
 *   npm run eval:tokenizers -- [--collections scifact-train,scifact,cranfield,cisi,ranking] [--json]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import * as lancedb from "@lancedb/lancedb";
import { DEFAULT_TOKENIZER, ftsParams, type Tokenizer } from "../engine/tokenizer.js";
import { loadCollection, type CollectionName } from "./collections.js";
import { meanMetrics, scoreQuery } from "./metrics.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The settings compared: the default, and each of its choices undone. */
export const SETTINGS: Record<string, Tokenizer> = {
  "default (stem, stop words, folding)": DEFAULT_TOKENIZER,
  "no stemming": { ...DEFAULT_TOKENIZER, stem: false },
  "no stop-word removal": { ...DEFAULT_TOKENIZER, stop_words: false },
  "neither": { ...DEFAULT_TOKENIZER, stem: false, stop_words: false },
  "no ASCII folding": { ...DEFAULT_TOKENIZER, ascii_folding: false },
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      collections: { type: "string", default: "scifact-train,scifact,cranfield,cisi,ranking" },
      "eval-dir": { type: "string", default: path.resolve(ROOT, "..", "shared", "eval") },
      json: { type: "boolean", default: false },
    },
  });
  const dir = mkdtempSync(path.join(tmpdir(), "semsearch-tokenizers-"));
  const results: { collection: string; setting: string; ndcg10: number; recall100: number }[] = [];
  try {
    const db = await lancedb.connect(dir);
    for (const name of values.collections.split(",")) {
      const collection = loadCollection(name as CollectionName | "scifact-train", values["eval-dir"]);
      const rows = collection.documents.map((doc) => ({ id: doc.id, text: [doc.title, doc.text].filter((part) => part !== "").join("\n") }));
      for (const [setting, tokenizer] of Object.entries(SETTINGS)) {
        const table = await db.createTable(`t${results.length}`, rows, { mode: "overwrite" });
        await table.createIndex("text", { config: lancedb.Index.fts(ftsParams(tokenizer)) });
        const perQuery = [];
        for (const query of collection.queries) {
          const hits = await table.query().fullTextSearch(query.text.replaceAll('"', " "), { columns: "text" }).select(["id", "_score"]).limit(100).toArray();
          perQuery.push(scoreQuery(hits.map((hit) => String(hit.id)), collection.qrels.get(query.id) as Map<string, number>));
        }
        const metrics = meanMetrics(perQuery);
        results.push({ collection: collection.name, setting, ndcg10: metrics.ndcg10, recall100: metrics.recall100 });
        process.stderr.write(`${collection.name}: ${setting}\n`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (values.json) {
    process.stdout.write(JSON.stringify(results, null, 2) + "\n");
    return;
  }
  for (const r of results) process.stdout.write(`${r.collection.padEnd(14)} ${r.setting.padEnd(38)} nDCG@10 ${r.ndcg10.toFixed(3)}  R@100 ${r.recall100.toFixed(3)}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) await main();
