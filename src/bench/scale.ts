/**
 * `npm run bench:scale`: warm hybrid search latency in one long-running process (as `semsearch
 * serve` runs it) at several corpus sizes, in one run: with the default budget for vectors held in
 * memory, and with any other budgets given (the old default was 256 MiB), so the figures of every
 * size and budget share the machine's state. Each size's project is the bench corpus built once
 * and cached (.cache/bench/serve-<n>, as for bench:serve).
 *
 *   npm run bench:scale -- [--sizes 10000,100000,300000] [--budgets-mb default,256] [--rounds 4] [--json]
 *
 * Each engine first runs every query twice (its vectors are loaded after a few searches, in the
 * background), then the queries `--rounds` times; p50 and p95 are over all of those searches.
 */
import { cpus, loadavg, totalmem } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { vectorCacheBytes } from "../engine/context.js";
import { Engine } from "../engine/index.js";
import { loadServeProject } from "./serve-setup.js";
import { percentile, timed } from "./stats.js";

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "10000,100000,300000" },
    "budgets-mb": { type: "string", default: "default,256" },
    rounds: { type: "string", default: "4" },
    json: { type: "boolean", default: false },
  },
});
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CACHE_DIR = path.join(ROOT, ".cache", "bench");
const EVAL_DIR = path.resolve(ROOT, "..", "shared", "eval");
const WARM_ROUNDS = 2;

function log(message: string) {
  process.stderr.write(`${message}\n`);
}

interface Row {
  objects: number;
  budget: string;
  budget_mb: number;
  p50_ms: number;
  p95_ms: number;
  searches: number;
}

/** Warm searches of `queries` on a project, in an engine opened with the vector budget `budget` ("default" or MiB). */
async function measure(dir: string, indexId: string, queries: string[], budget: string, rounds: number): Promise<{ times: number[]; budgetMb: number }> {
  const saved = process.env.SEMSEARCH_VECTOR_CACHE_MB;
  if (budget === "default") delete process.env.SEMSEARCH_VECTOR_CACHE_MB;
  else process.env.SEMSEARCH_VECTOR_CACHE_MB = budget;
  const budgetMb = vectorCacheBytes() / 1024 / 1024;
  const engine = new Engine({ projectDir: dir });
  try {
    for (let round = 0; round < WARM_ROUNDS; round++) for (const query of queries) await engine.search(indexId, { query, snippets: false });
    const times: number[] = [];
    for (let round = 0; round < rounds; round++) for (const query of queries) times.push((await timed(() => engine.search(indexId, { query, snippets: false })))[1]);
    return { times, budgetMb };
  } finally {
    await engine.close();
    if (saved === undefined) delete process.env.SEMSEARCH_VECTOR_CACHE_MB;
    else process.env.SEMSEARCH_VECTOR_CACHE_MB = saved;
  }
}

const sizes = values.sizes.split(",").map(Number);
const budgets = values["budgets-mb"].split(",").map((budget) => budget.trim());
const rows: Row[] = [];
for (const size of sizes) {
  const project = await loadServeProject(size, CACHE_DIR, EVAL_DIR, log);
  for (const budget of budgets) {
    log(`${size} objects, vectors budget ${budget}…`);
    const { times, budgetMb } = await measure(project.dir, project.indexId, project.queries, budget, Number(values.rounds));
    rows.push({ objects: size, budget, budget_mb: Math.round(budgetMb), p50_ms: percentile(times, 50), p95_ms: percentile(times, 95), searches: times.length });
  }
}

const machine = { cores: cpus().length, memory_gib: Math.round(totalmem() / 1024 ** 3), node: process.version, load: loadavg().map((x) => Math.round(x * 10) / 10) };
if (values.json) {
  process.stdout.write(`${JSON.stringify({ machine, rows }, null, 2)}\n`);
} else {
  const lines = [
    `warm hybrid search in one process (${machine.cores} cores, ${machine.memory_gib} GiB, Node ${machine.node}, load ${machine.load.join(" ")} at the end)`,
    "objects   vectors budget        p50 ms   p95 ms   searches   p50 ÷ the size before's",
  ];
  for (const row of rows) {
    const before = sizes[sizes.indexOf(row.objects) - 1];
    const first = rows.find((other) => other.budget === row.budget && other.objects === before);
    lines.push(
      [
        String(row.objects).padStart(7),
        `${row.budget === "default" ? "default" : "set"} (${row.budget_mb} MiB)`.padEnd(20),
        row.p50_ms.toFixed(1).padStart(8),
        row.p95_ms.toFixed(1).padStart(8),
        String(row.searches).padStart(10),
        first ? `${(row.p50_ms / first.p50_ms).toFixed(2)}×`.padStart(19) : "",
      ].join("  "),
    );
  }
  process.stdout.write(`${lines.join("\n")}\n`);
}
