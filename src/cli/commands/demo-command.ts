/** `semsearch demo`: the whole pipeline on the bundled sample articles, in a fresh temporary project. */
import { mkdtempSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { processAlive, type Engine } from "../../engine/index.js";
import { openEngine, projectDir, type GlobalOptions } from "../options.js";
import { note, printResult } from "../output.js";
import { progressReporter } from "../progress.js";
import { searchResponse } from "../render/json.js";
import { renderSearchTable } from "../render/table.js";

export const SAMPLE_FILE = fileURLToPath(new URL("../../../fixtures/sample/articles.jsonl", import.meta.url));
export const DEMO_QUERY = "how do plants make energy from sunlight";

/** Stops the demo project's background worker (it may still be tidying the index), then removes the project. */
async function removeDemoProject(engine: Engine, dir: string): Promise<void> {
  const { pid } = await engine.workerStatus().catch(() => ({ pid: null }));
  await engine.close();
  if (pid !== null && processAlive(pid)) {
    process.kill(pid, "SIGKILL"); // (a throwaway project: nothing of it is kept)
    for (let waited = 0; processAlive(pid) && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  rmSync(dir, { recursive: true, force: true });
}

export async function demoCommand(queryWords: string[], options: GlobalOptions & { limit?: number; keep?: boolean }): Promise<void> {
  const query = queryWords.length > 0 ? queryWords.join(" ") : DEMO_QUERY;
  // A project of its own is removed at the end (and on Ctrl+C), unless --keep; one named with --project is the user's.
  const temporary = options.project === undefined && !options.keep;
  const dir = options.project !== undefined ? projectDir(options) : mkdtempSync(path.join(tmpdir(), "semsearch-demo-"));
  const engine = openEngine(options, dir);
  const interrupted = (signal: NodeJS.Signals) => {
    void removeDemoProject(engine, dir).finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };
  if (temporary) process.once("SIGINT", interrupted).once("SIGTERM", interrupted);
  try {
    note(options, `Project: ${engine.projectDir}${temporary ? " (removed at the end; --keep keeps it)" : ""}`);
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
    if (temporary) note(options, `\nThe demo project was removed. Keep one to try more queries with: semsearch demo --keep`);
    else note(options, `\nTry: semsearch --project ${engine.projectDir} search ${id} "your question" --object-fields title`);
  } finally {
    process.removeListener("SIGINT", interrupted).removeListener("SIGTERM", interrupted);
    if (temporary) await removeDemoProject(engine, dir);
    else await engine.close();
  }
}
