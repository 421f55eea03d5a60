/** `semsearch demo`: the whole pipeline on the bundled sample articles, in a fresh temporary project. */
import { mkdtempSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { openEngine, type GlobalOptions } from "../options.js";
import { note, printResult } from "../output.js";
import { progressReporter } from "../progress.js";
import { searchResponse } from "../render/json.js";
import { renderSearchTable } from "../render/table.js";

export const SAMPLE_FILE = fileURLToPath(new URL("../../../fixtures/sample/articles.jsonl", import.meta.url));
export const DEMO_QUERY = "how do plants make energy from sunlight";

export async function demoCommand(queryWords: string[], options: GlobalOptions & { limit?: number }): Promise<void> {
  const query = queryWords.length > 0 ? queryWords.join(" ") : DEMO_QUERY;
  const dir = options.project ?? mkdtempSync(path.join(tmpdir(), "semsearch-demo-"));
  const engine = openEngine(options, dir);
  try {
    note(options, `Project: ${engine.projectDir}`);
    const added = await engine.addObjects([{ text: await readFile(SAMPLE_FILE, "utf8"), source: SAMPLE_FILE }]);
    note(options, `Added ${added.count} sample articles from ${path.relative(process.cwd(), SAMPLE_FILE) || SAMPLE_FILE}.`);
    const { id } = await engine.createIndex({
      configuration: { index_type: { name: "text" }, fields: { searchable: { allow: ["title", "body"] } } },
    });
    const progress = progressReporter(options.json, id);
    try {
      await engine.waitForIndex(id, { onProgress: (p) => progress.update(p) });
    } finally {
      progress.done();
    }
    note(options, `Index ${id} is ready. Query: "${query}"\n`);
    const page = await engine.search(id, { query, limit: options.limit ?? 5, objectFields: "topic" });
    printResult(options, searchResponse(page), () => renderSearchTable(page, 0, ["topic"], query));
    note(options, `\nTry: semsearch --project ${engine.projectDir} search ${id} "your question" --object-fields title`);
  } finally {
    await engine.close();
  }
}
