/**
 * `npm run bench:serve`: search over HTTP (`semsearch serve`) against the same search in process,
 * on the bench corpus: latency (p50/p99) and throughput at 1, 8 and 32 connections to 127.0.0.1,
 * errors, and the server's resident memory across the run.
 *
 *   npm run bench:serve -- [--objects 10000] [--requests 10000] [--sequential 1000] [--duration-cap 120] [--json]
 *
 * --requests bounds each concurrent phase (8 and 32 connections), --sequential the in-process and
 * 1-connection phases (one search at a time: their count sets their run time), --duration-cap each
 * phase in seconds, whichever comes first. Targets (the issue's): HTTP adds ≤ 2 ms to p50 at
 * 1 connection; no errors over 10,000 requests at 32 connections; memory stable.
 */
import autocannon from "autocannon";
import { cpus } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Engine } from "../engine/index.js";
import { loadServeProject, spawnServer, type ServeProject, type ServerProcess } from "./serve-setup.js";
import { percentile } from "./stats.js";

const { values } = parseArgs({
  options: {
    objects: { type: "string", default: "10000" },
    requests: { type: "string", default: "10000" },
    sequential: { type: "string", default: "1000" },
    "duration-cap": { type: "string", default: "120" },
    json: { type: "boolean", default: false },
  },
});
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = path.join(ROOT, "bin", "semsearch");
const CACHE_DIR = path.join(ROOT, ".cache", "bench");
const EVAL_DIR = path.resolve(ROOT, "..", "shared", "eval");
const LIMIT = 10;
const WARM_UP = 200;
const capMs = Number(values["duration-cap"]) * 1000;

interface Phase {
  phase: string;
  connections: number;
  /** Answered with a 2xx (in process: searches that resolved). */
  requests: number;
  /** Connection errors and timeouts plus non-2xx answers (in process: searches that threw). */
  errors: number;
  req_per_s: number;
  p50_ms: number;
  p99_ms: number;
  /** Stopped by --duration-cap before its request count. */
  capped: boolean;
  /** The server's RSS right after the phase, MiB. */
  rss_mb: number;
}

function log(message: string): void {
  process.stderr.write(message + "\n");
}

const round = (value: number) => Math.round(value * 100) / 100;

function summarize(phase: string, connections: number, latencies: number[], errors: number, ms: number, capped: boolean, rss: number): Phase {
  return {
    phase, connections, requests: latencies.length, errors, capped, rss_mb: round(rss),
    req_per_s: round(latencies.length / (ms / 1000)),
    p50_ms: round(percentile(latencies, 50)),
    p99_ms: round(percentile(latencies, 99)),
  };
}

/** The same searches in this process, one at a time: the floor HTTP is compared against. */
async function inProcess(project: ServeProject, count: number, server: ServerProcess): Promise<Phase> {
  const engine = new Engine({ projectDir: project.dir });
  try {
    // Same options as the HTTP route (which asks for no snippets), so only the transport differs.
    const search = (i: number) => engine.search(project.indexId, { query: project.queries[i % project.queries.length] as string, limit: LIMIT, snippets: false });
    for (let i = 0; i < Math.min(WARM_UP, count); i++) await search(i);
    const latencies: number[] = [];
    let errors = 0;
    const start = performance.now();
    let i = 0;
    for (; i < count && performance.now() - start < capMs; i++) {
      const t = performance.now();
      try {
        await search(i);
        latencies.push(performance.now() - t);
      } catch {
        errors++;
      }
    }
    return summarize("in process", 1, latencies, errors, performance.now() - start, i < count, server.rssMb());
  } finally {
    await engine.close();
  }
}

/** One autocannon run; latencies are taken from each response (autocannon's histogram keeps whole ms only). */
async function overHttp(name: string, server: ServerProcess, project: ServeProject, connections: number, amount: number): Promise<Phase> {
  const requests = project.queries.map((query) => ({
    method: "GET" as const,
    path: `/v1/indexes/${encodeURIComponent(project.indexId)}/search?query=${encodeURIComponent(query)}&limit=${LIMIT}`,
  }));
  let clients = 0;
  const latencies: number[] = [];
  const start = performance.now();
  let capped = false;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: server.url,
        connections,
        amount,
        timeout: 10,
        headers: { authorization: `Bearer ${project.key}` },
        requests,
        // Each connection starts at another place in the list, so concurrent requests differ; the first matches the in-process order.
        setupClient: (client) => {
          const offset = (clients++ * 7) % requests.length;
          client.setRequests([...requests.slice(offset), ...requests.slice(0, offset)]);
        },
      },
      (error, res) => (error ? reject(error) : resolve(res)),
    );
    instance.on("response", (_client, status, _bytes, ms) => {
      if (status >= 200 && status < 300) latencies.push(ms);
    });
    const timer = setTimeout(() => ((capped = true), instance.stop()), capMs);
    instance.once("done", () => clearTimeout(timer));
  });
  const errors = result.errors + result.non2xx;
  return summarize(name, connections, latencies, errors, performance.now() - start, capped, server.rssMb());
}

/** One search over HTTP, checked by hand: a wrong key or index would otherwise show only as a column of errors. */
async function checkOnce(server: ServerProcess, project: ServeProject): Promise<void> {
  const url = `${server.url}/v1/indexes/${encodeURIComponent(project.indexId)}/search?query=${encodeURIComponent(project.queries[0] as string)}&limit=${LIMIT}`;
  const response = await fetch(url, { headers: { authorization: `Bearer ${project.key}` } });
  const body = (await response.json()) as { results?: unknown[] };
  if (response.status !== 200 || !body.results?.length) throw new Error(`search over HTTP answered ${response.status}: ${JSON.stringify(body).slice(0, 500)}`);
}

function renderReport(report: Report): string {
  const columns = ["phase", "connections", "requests", "errors", "req/s", "p50 ms", "p99 ms", "RSS after, MiB"];
  const rows = report.phases.map((p) => [p.phase + (p.capped ? " (capped)" : ""), p.connections, p.requests, p.errors, p.req_per_s, p.p50_ms, p.p99_ms, Math.round(p.rss_mb)].map(String));
  const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) => "  " + cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join("  ");
  const rss = report.rss_mb;
  return [
    `semsearch serve bench — ${report.objects} objects, ${report.queries} distinct queries, limit ${LIMIT}, ${report.machine.cores} cores, Node ${report.machine.node}`,
    `  server: a child process on 127.0.0.1 with a bearer key and no access log; load generator: autocannon in this process.`,
    `  Both share the machine's ${report.machine.cores} cores (the server's event loop, LanceDB's and the model's threads, and autocannon's event loop).`,
    "",
    line(columns),
    ...rows.map(line),
    "",
    `HTTP overhead at p50, 1 connection: ${report.overhead_p50_ms} ms (target ≤ 2 ms)`,
    `errors at 32 connections over ${report.requests_at_32} requests: ${report.errors_at_32}`,
    `server RSS (MiB): start ${rss.start}, after warm-up ${rss.after_warm_up}, peak ${rss.peak}, end ${rss.end} (end − after warm-up: ${round(rss.end - rss.after_warm_up)})`,
    "",
  ].join("\n");
}

type Report = Awaited<ReturnType<typeof run>>;

async function run(project: ServeProject, server: ServerProcess) {
  const requests = Number(values.requests);
  const sequential = Number(values.sequential);
  const start = server.rssMb();
  let peak = start;
  const sampler = setInterval(() => (peak = Math.max(peak, server.rssMb())), 200);
  try {
    await checkOnce(server, project);
    const phases: Phase[] = [];
    const step = async (name: string, measure: () => Promise<Phase>) => {
      log(`${name}…`);
      const phase = await measure();
      phases.push(phase);
      log(`  ${phase.requests} requests, ${phase.errors} errors, p50 ${phase.p50_ms} ms, p99 ${phase.p99_ms} ms, RSS ${Math.round(phase.rss_mb)} MiB`);
      return phase;
    };
    const local = await step(`in process, ${sequential} sequential searches`, () => inProcess(project, sequential, server));
    const warm = await step(`HTTP warm-up, ${WARM_UP} requests at 8 connections`, () => overHttp("HTTP warm-up", server, project, 8, WARM_UP));
    const one = await step(`HTTP, 1 connection, ${sequential} requests`, () => overHttp("HTTP", server, project, 1, sequential));
    await step(`HTTP, 8 connections, ${requests} requests`, () => overHttp("HTTP", server, project, 8, requests));
    const many = await step(`HTTP, 32 connections, ${requests} requests`, () => overHttp("HTTP", server, project, 32, requests));
    const end = server.rssMb();
    return {
      machine: { cores: cpus().length, node: process.version },
      objects: Number(values.objects),
      queries: project.queries.length,
      phases,
      overhead_p50_ms: round(one.p50_ms - local.p50_ms),
      requests_at_32: many.requests + many.errors,
      errors_at_32: many.errors,
      rss_mb: { start: round(start), after_warm_up: warm.rss_mb, peak: round(Math.max(peak, end)), end: round(end) },
    };
  } finally {
    clearInterval(sampler);
  }
}

async function main(): Promise<void> {
  const project = await loadServeProject(Number(values.objects), CACHE_DIR, EVAL_DIR, log);
  log(`starting semsearch serve on ${project.dir}…`);
  const server = await spawnServer(BIN, project.dir);
  let report: Report;
  try {
    report = await run(project, server);
  } finally {
    await server.stop();
  }
  process.stdout.write(values.json ? JSON.stringify(report, null, 2) + "\n" : renderReport(report));
}

await main();
