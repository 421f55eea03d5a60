/**
 * `npm run bench:highlights`: what text highlights cost. The same generated objects are indexed with
 * and without highlights; reports ingest throughput, size on disk, and search latency with and
 * without `result_fields=highlights`.
 *
 *   npm run bench:highlights -- [--objects 10000] [--queries 50] [--json]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Engine } from "../engine/index.js";
import { generateObjects, generateQueries } from "./generate.js";
import { dirSize } from "./peers/size.js";
import { percentile, timed } from "./stats.js";

const { values } = parseArgs({
  options: {
    objects: { type: "string", default: "10000" },
    queries: { type: "string", default: "50" },
    json: { type: "boolean", default: false },
  },
});
const count = Number(values.objects);
const queries = generateQueries(Number(values.queries), 5);
const jsonl = generateObjects(count, 99)
  .map((o) => JSON.stringify(o))
  .join("\n");

async function latency(engine: Engine, id: string, resultFields?: string) {
  await engine.search(id, { query: "warm up", resultFields });
  const times: number[] = [];
  for (const query of queries) times.push((await timed(() => engine.search(id, { query, resultFields })))[1]);
  return { p50_ms: Math.round(percentile(times, 50) * 10) / 10, p95_ms: Math.round(percentile(times, 95) * 10) / 10 };
}

async function variant(highlights: boolean) {
  const dir = mkdtempSync(path.join(tmpdir(), "semsearch-bench-hl-"));
  const engine = new Engine({ projectDir: dir });
  try {
    await engine.addObjects([{ text: jsonl, source: "generated" }]);
    const [{ id }, ms] = await timed(async () => {
      const created = await engine.createIndex({ configuration: { index_type: { name: "text", ...(highlights ? { highlights: { text: true } } : {}) } } });
      await engine.waitForIndex(created.id, { onProgress: (p) => process.stderr.write(`\r  ${highlights ? "with" : "without"} highlights: ${p.done}/${p.total}`) });
      return created;
    });
    process.stderr.write("\n");
    const result = {
      highlights,
      ingest_objects_per_s: Math.round((count / (ms / 1000)) * 10) / 10,
      index_mb: Math.round(((await dirSize(path.join(dir, "data"))) / 1e6) * 10) / 10,
      search: await latency(engine, id),
      search_with_highlights: highlights ? await latency(engine, id, "highlights") : null,
    };
    return result;
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const results = [await variant(false), await variant(true)];
if (values.json) process.stdout.write(JSON.stringify({ objects: count, results }, null, 2) + "\n");
else {
  process.stdout.write(`highlights cost on ${count} generated objects\n`);
  for (const r of results) {
    const withHl = r.search_with_highlights ? ` · with result_fields=highlights p50 ${r.search_with_highlights.p50_ms} ms, p95 ${r.search_with_highlights.p95_ms} ms` : "";
    process.stdout.write(
      `  ${r.highlights ? "with   " : "without"} highlights: ingest ${r.ingest_objects_per_s} objects/s, data ${r.index_mb} MB, search p50 ${r.search.p50_ms} ms, p95 ${r.search.p95_ms} ms${withHl}\n`,
    );
  }
}
