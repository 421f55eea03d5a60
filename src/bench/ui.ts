/**
 * `npm run bench:ui`: the search page in Chromium against `semsearch serve` on the bench project
 * (10,000 objects by default, the one bench:serve builds and caches): the time from the keystroke
 * that ends a query to its results painted, p50/p95 over 100 queries, read from the page's own
 * performance marks (`semsearch:input-to-paint`, which includes the page's 150 ms debounce); and
 * the page's weight, gzipped.
 *
 *   npm run bench:ui -- [--objects 10000] [--queries 100] [--json]
 *
 * Needs Debian's Chromium (`.ci/browser install`; SEMSEARCH_CHROMIUM names another).
 */
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import { loadServeProject, spawnServer } from "./serve-setup.js";
import { percentile } from "./stats.js";

const { values } = parseArgs({
  options: {
    objects: { type: "string", default: "10000" },
    queries: { type: "string", default: "100" },
    json: { type: "boolean", default: false },
  },
});
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = path.join(ROOT, "bin", "semsearch");
const CACHE_DIR = path.join(ROOT, ".cache", "bench");
const EVAL_DIR = path.resolve(ROOT, "..", "shared", "eval");
const UI_DIR = path.join(ROOT, "dist", "ui");
const CHROMIUM = process.env.SEMSEARCH_CHROMIUM ?? "/usr/bin/chromium";
/** Queries searched first and not counted (the model's first calls, the browser's first layouts). */
const WARM_UP = 5;

// (page.evaluate runs its function in the browser, whose globals the Node program has no types for)
declare const document: any;

const log = (message: string) => process.stderr.write(`${message}\n`);

/** The page's files as the browser gets them: bytes and gzipped bytes. */
function pageWeight(): { file: string; bytes: number; gzip_bytes: number }[] {
  return ["index.html", "main.js", "app.css", "icon.svg"].map((file) => {
    const body = readFileSync(path.join(UI_DIR, file));
    return { file, bytes: body.length, gzip_bytes: gzipSync(body, { level: 9 }).length };
  });
}

/**
 * `count` distinct queries from the corpus's: each whole, then each without its last word (what a
 * person has typed a moment before the end), then without its first, as many as needed.
 */
function queriesOf(corpus: string[], count: number): string[] {
  const words = corpus.map((query) => query.split(/\s+/));
  const variants = [...words.map((w) => w.slice(0, -1)), ...words.map((w) => w.slice(1))].map((w) => w.join(" ")).filter((query) => query.length >= 3);
  const queries = [...new Set([...corpus, ...variants])].slice(0, count);
  if (queries.length < count) throw new Error(`the corpus gives ${queries.length} distinct queries, fewer than the ${count} asked for`);
  return queries;
}

async function main(): Promise<void> {
  const project = await loadServeProject(Number(values.objects), CACHE_DIR, EVAL_DIR, log);
  const queries = queriesOf(project.queries, Number(values.queries) + WARM_UP);
  const server = await spawnServer(BIN, project.dir);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-default-apps"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const started = performance.now();
    await page.goto(`${server.url}/`);
    await page.locator("#key").fill(project.key);
    await page.locator("#key").press("Enter");
    await page.locator("#q").waitFor();
    const loadMs = performance.now() - started;
    const timings: number[] = [];
    let empty = 0;
    for (const [i, query] of queries.entries()) {
      const before = await page.evaluate(() => {
        performance.clearMeasures();
        return Number(document.documentElement.dataset.searched ?? 0);
      });
      // One input event with the whole query: the keystroke that ends it.
      await page.locator("#q").fill(query);
      await page.waitForFunction((n) => Number(document.documentElement.dataset.searched ?? 0) > n, before, { timeout: 60_000 });
      const ms = await page.evaluate(() => performance.getEntriesByName("semsearch:input-to-paint").at(-1)?.duration ?? NaN);
      if ((await page.locator("#results > li").count()) === 0) empty++;
      if (i >= WARM_UP) timings.push(ms);
    }
    const weight = pageWeight();
    const result = {
      objects: Number(values.objects),
      queries: timings.length,
      cpus: cpus().length,
      debounce_ms: 150,
      keystroke_to_paint_ms: { p50: round(percentile(timings, 50)), p95: round(percentile(timings, 95)), max: round(Math.max(...timings)) },
      queries_with_no_results: empty,
      first_load_with_key_ms: round(loadMs),
      page_weight: weight,
      page_weight_gzip_bytes: weight.reduce((sum, file) => sum + file.gzip_bytes, 0),
    };
    if (values.json) {
      process.stdout.write(`${JSON.stringify(result)}\n`);
    } else {
      process.stdout.write(
        [
          `search page on ${result.objects.toLocaleString("en-US")} objects, ${result.queries} queries, ${result.cpus} cores`,
          `keystroke to results painted: p50 ${result.keystroke_to_paint_ms.p50} ms, p95 ${result.keystroke_to_paint_ms.p95} ms, max ${result.keystroke_to_paint_ms.max} ms (includes the ${result.debounce_ms} ms debounce)`,
          `queries with no results: ${empty}`,
          `page weight: ${weight.map((file) => `${file.file} ${file.bytes} B (${file.gzip_bytes} B gzipped)`).join(", ")}; ${result.page_weight_gzip_bytes} B gzipped in all`,
        ].join("\n") + "\n",
      );
    }
  } finally {
    await browser.close();
    await server.stop();
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

await main();
