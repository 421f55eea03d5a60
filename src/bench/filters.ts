/**
 * `npm run bench:filters`: what filters cost. Generated products with typed fields (category,
 * price, rating, in_stock, released, and the lists tags and sizes) are indexed once (the project is
 * cached under .cache/bench/filters-lists-<n>/, git-ignored), then the same queries run unfiltered and with filters
 * of different selectivity; reports warm latency p50/p95 and the total each filter leaves.
 *
 *   npm run bench:filters -- [--objects 100000] [--queries 50] [--json]
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { Engine } from "../engine/index.js";
import { generateQueries, seededRandom } from "./generate.js";
import { percentile, timed } from "./stats.js";

const { values } = parseArgs({
  options: {
    objects: { type: "string", default: "100000" },
    queries: { type: "string", default: "50" },
    json: { type: "boolean", default: false },
  },
});
const count = Number(values.objects);
const queries = generateQueries(Number(values.queries), 5);
const log = (message: string) => process.stderr.write(`${message}\n`);

const NOUNS = ["lamp", "kettle", "tent", "jacket", "speaker", "notebook", "bicycle", "chair", "camera", "backpack", "blender", "guitar", "helmet", "mug", "scarf", "drill", "telescope", "pillow", "watch", "rug"];
const ADJECTIVES = ["compact", "waterproof", "vintage", "lightweight", "heavy-duty", "wireless", "handmade", "folding", "quiet", "solar"];
const USES = ["for the river trips", "for a small garden", "for winter evenings", "for the old harbour", "for long train rides", "for a busy kitchen", "for mountain villages", "for the library", "for early mornings", "for the festival"];

function products(n: number): string {
  const random = seededRandom(2024);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)] as T;
  const lines: string[] = [];
  const start = Date.UTC(2015, 0, 1);
  const span = Date.UTC(2025, 0, 1) - start;
  for (let i = 0; i < n; i++) {
    lines.push(
      JSON.stringify({
        id: `prod-${i}`,
        title: `A ${pick(ADJECTIVES)} ${pick(NOUNS)} ${pick(USES)}`,
        category: `cat-${String(Math.floor(random() * 20)).padStart(2, "0")}`,
        price: Math.round(random() * 50_000) / 100,
        rating: 1 + Math.floor(random() * 5),
        in_stock: random() < 0.7,
        released: new Date(start + Math.floor(random() * span)).toISOString(),
        // 1–3 of 40 tags, and 1–4 sizes from 30 to 49: lists filtered by element
        tags: Array.from({ length: 1 + Math.floor(random() * 3) }, () => `tag-${String(Math.floor(random() * 40)).padStart(2, "0")}`),
        sizes: Array.from({ length: 1 + Math.floor(random() * 4) }, () => 30 + Math.floor(random() * 20)),
      }),
    );
  }
  return lines.join("\n");
}

const CONFIG = {
  configuration: {
    index_type: { name: "text" },
    fields: {
      searchable: { allow: ["title"] },
      filterable: { allow: ["category", "price", "rating", "in_stock", "released", "tags", "sizes"] },
      types: { price: "float", rating: "int", in_stock: "bool", released: "datetime", sizes: "int" },
    },
  },
};

const FILTERS: { name: string; filter?: string }[] = [
  { name: "none" },
  { name: "selective (≈0.1%)", filter: 'category:"cat-07" AND price:[100 TO 110]' },
  { name: "one category (≈5%)", filter: 'category:"cat-07"' },
  { name: "medium (≈14%)", filter: "rating:>=4 AND released:[2021-06-01 TO *]" },
  { name: "broad (≈70%)", filter: "in_stock:true" },
  { name: "broad NOT (≈95%)", filter: 'NOT category:"cat-07"' },
  { name: "list: one tag (≈5%)", filter: 'tags:"tag-07"' },
  { name: "list: two tags OR-ed (≈10%)", filter: 'tags:"tag-07" OR tags:"tag-21"' },
  { name: "list: NOT a tag (≈95%)", filter: 'NOT tags:"tag-07"' },
  { name: "list: a few sizes (≈35%)", filter: "sizes:[40 TO 42]" },
  { name: "list: a wide range, sorted (≈75%)", filter: "sizes:[-1000 TO 39]" },
  { name: "list: sizes above (≈40%)", filter: "sizes:>45" },
];

async function project(): Promise<{ engine: Engine; id: string; ingestSeconds: number | null }> {
  const dir = path.resolve(".cache", "bench", `filters-lists-${count}`);
  const marker = path.join(dir, "index-id");
  mkdirSync(dir, { recursive: true });
  const engine = new Engine({ projectDir: path.join(dir, "project") });
  if (existsSync(marker)) {
    const { readFileSync } = await import("node:fs");
    const id = readFileSync(marker, "utf8").trim();
    await engine.waitForIndex(id);
    return { engine, id, ingestSeconds: null };
  }
  const { id } = await engine.createIndex(CONFIG);
  log(`indexing ${count} products into ${dir} …`);
  const [, ms] = await timed(async () => {
    await engine.addObjects([{ text: products(count), source: "generated" }]);
    let last = 0;
    await engine.waitForIndex(id, { onProgress: (progress) => {
      if (Date.now() - last > 30_000) {
        last = Date.now();
        log(`  ${JSON.stringify(progress)}`);
      }
    } });
  });
  writeFileSync(marker, id);
  return { engine, id, ingestSeconds: ms / 1000 };
}

async function main(): Promise<void> {
  const { engine, id, ingestSeconds } = await project();
  const rows = [];
  for (const { name, filter } of FILTERS) {
    await engine.search(id, { query: "warm up", filter });
    const first = await engine.search(id, { query: queries[0] as string, filter });
    const times: number[] = [];
    for (const query of queries) times.push((await timed(() => engine.search(id, { query, filter })))[1]);
    rows.push({
      filter: name,
      expression: filter ?? "",
      total: first.pagination.statistics.total,
      total_calculation: first.pagination.statistics.total_calculation,
      p50_ms: Math.round(percentile(times, 50) * 10) / 10,
      p95_ms: Math.round(percentile(times, 95) * 10) / 10,
    });
  }
  const result = { objects: count, queries: queries.length, ingest_seconds: ingestSeconds, node: process.version, total_for_query: queries[0], searches: rows };
  mkdirSync("bench/results", { recursive: true });
  writeFileSync(path.join("bench/results", `filters-${count}.json`), JSON.stringify(result, null, 2));
  if (values.json) {
    process.stdout.write(JSON.stringify(result, null, 2) + "\n");
  } else {
    process.stdout.write(`${count} objects, ${queries.length} queries, warm hybrid search${ingestSeconds ? `, ingest ${ingestSeconds.toFixed(0)} s` : ""}\n`);
    for (const row of rows) {
      process.stdout.write(
        `${row.filter.padEnd(22)} total ${String(row.total).padStart(6)} ${row.total_calculation.padEnd(8)} p50 ${String(row.p50_ms).padStart(7)} ms  p95 ${String(row.p95_ms).padStart(7)} ms  ${row.expression}\n`,
      );
    }
  }
  await engine.close();
}

await main();
