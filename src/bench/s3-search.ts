/**
 * Search figures for `npm run bench:s3`, each on a local project and on the same corpus in a bucket.
 * The bucket's figures are timed on processes that reach the S3 server directly, and its requests
 * counted on the same runs made through the counting proxy (so the proxy's hop is in no time
 * reported as the bucket's; its own times are in the JSON as `s3_proxied`), all taking turns:
 * - warm: `semsearch serve` on each (three servers), the same hybrid searches over one kept-alive
 *   connection to each, sequential, in alternating blocks of 25 (so that all see the same moments
 *   of a shared machine) after a warm-up; requests per search are the proxy's count during the
 *   proxied server's blocks over its searches, leaving out the server's background reading of its
 *   keys (every second, whatever the load: reported apart, per second);
 * - cold: the CLI (`bin/semsearch --in-process search`, the package's bin) as a new process per
 *   search, timed from spawn to exit, after one unmeasured run of each (the page cache warm, as for
 *   a person's second command);
 * - a replica's time to ready: `semsearch serve --no-worker` from spawn until `GET /readyz` first
 *   answers 200 (looked at every 25 ms), and the requests it made meanwhile.
 */
import type { CountingProxy, ProxiedRequest } from "./s3-proxy.js";
import { mustRun, startServe, type ServeProcess } from "./s3-setup.js";
import { percentile } from "./stats.js";

export interface Target {
  /** project directory or s3:// address */
  project: string;
  indexId: string;
  env: NodeJS.ProcessEnv;
}

/** The three ways each figure is run. */
export interface Targets {
  local: Target;
  /** the bucket project, its processes reaching the S3 server directly: timed */
  s3: Target;
  /** the same project through the counting proxy: counted */
  counted: Target;
}

export interface Latency {
  p50_ms: number;
  p95_ms: number;
  runs: number;
}

/** A request (s3-proxy.ts) a bucket's server makes in the background, not for a search: its keys, read every second. */
const isKeyRefresh = (request: ProxiedRequest) => / state\/keys\.json\//.test(request.kind);

const round = (value: number, places = 1) => Math.round(value * 10 ** places) / 10 ** places;
const latency = (ms: number[]): Latency => ({ p50_ms: round(percentile(ms, 50)), p95_ms: round(percentile(ms, 95)), runs: ms.length });

/** S3 requests per search (or per start), with the server's time summed over them. */
export interface Requests {
  /** requests per unit */
  count: number;
  /** the S3 server's time to answer them, summed, per unit, ms (requests that overlap count twice) */
  server_ms: number;
  /** the answers' bodies, summed, per unit, MB */
  mb: number;
  /** the most frequent kinds, per unit; the rest summed as "(other kinds)" */
  where: Record<string, number>;
}

export function summarize(requests: ProxiedRequest[], per: number, top = 16): Requests {
  const counts = new Map<string, number>();
  for (const { kind } of requests) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  const sorted = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const rest = sorted.slice(top).reduce((sum, [, count]) => sum + count, 0);
  return {
    count: round(requests.length / per, 2),
    server_ms: round(requests.reduce((sum, request) => sum + request.ms, 0) / per),
    mb: round(requests.reduce((sum, request) => sum + request.bytes, 0) / per / 1e6, 2),
    where: Object.fromEntries([...sorted.slice(0, top), ...(rest ? [["(other kinds)", rest] as const] : [])].map(([kind, count]) => [kind, round(count / per, 2)])),
  };
}

async function searchOnce(url: string, indexId: string, query: string): Promise<number> {
  const started = performance.now();
  const answer = await fetch(`${url}/v1/indexes/${encodeURIComponent(indexId)}/search?query=${encodeURIComponent(query)}&limit=10`);
  const body = (await answer.json()) as { results?: unknown[] };
  if (answer.status !== 200 || !body.results?.length) throw new Error(`search answered ${answer.status}: ${JSON.stringify(body).slice(0, 300)}`);
  return performance.now() - started;
}

export interface WarmResult {
  local: Latency;
  s3: Latency;
  s3_proxied: Latency;
  requests: Requests;
  background_requests_per_s: number;
}

type Timed = { local: number[]; s3: number[]; s3_proxied: number[] };
const WAYS = ["local", "s3", "s3_proxied"] as const;
const targetOf = (targets: Targets, way: (typeof WAYS)[number]) => (way === "s3_proxied" ? targets.counted : targets[way]);

export async function warmSearches(bin: string, targets: Targets, queries: string[], searches: number, proxy: CountingProxy, log: (m: string) => void): Promise<WarmResult> {
  const servers: ServeProcess[] = [];
  try {
    for (const way of WAYS) servers.push(await startServe(bin, targetOf(targets, way).project, targetOf(targets, way).env));
    const query = (i: number) => queries[i % queries.length] as string;
    const search = (w: number, i: number) => searchOnce((servers[w] as ServeProcess).url, targetOf(targets, WAYS[w] as (typeof WAYS)[number]).indexId, query(i));
    for (let i = 0; i < 2 * queries.length; i++) for (let w = 0; w < WAYS.length; w++) await search(w, i);
    log(`  warmed up (${2 * queries.length} searches each); ${searches} searches each, alternating blocks of 25…`);
    const times: Timed = { local: [], s3: [], s3_proxied: [] };
    const during: ProxiedRequest[] = [];
    const phaseMark = proxy.mark();
    const started = performance.now();
    for (let block = 0; block < searches; block += 25) {
      for (let w = 0; w < WAYS.length; w++) {
        const mark = proxy.mark();
        for (let i = block; i < Math.min(block + 25, searches); i++) times[WAYS[w] as keyof Timed].push(await search(w, i));
        if (WAYS[w] === "s3_proxied") during.push(...proxy.since(mark));
      }
    }
    const seconds = (performance.now() - started) / 1000;
    return {
      local: latency(times.local),
      s3: latency(times.s3),
      s3_proxied: latency(times.s3_proxied),
      requests: summarize(during.filter((request) => !isKeyRefresh(request)), searches),
      background_requests_per_s: round(proxy.since(phaseMark).filter(isKeyRefresh).length / seconds, 1),
    };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

export interface ColdResult {
  local: Latency;
  s3: Latency;
  s3_proxied: Latency;
  requests: Requests;
}

/** `runs` of `measure` for each way, taking turns, with the proxy's requests during the proxied ones. */
async function inTurns(targets: Targets, runs: number, proxy: CountingProxy, measure: (target: Target, i: number) => Promise<number>) {
  const times: Timed = { local: [], s3: [], s3_proxied: [] };
  const requests: ProxiedRequest[] = [];
  for (let i = 1; i <= runs; i++) {
    for (const way of WAYS) {
      const mark = proxy.mark();
      times[way].push(await measure(targetOf(targets, way), i));
      if (way === "s3_proxied") requests.push(...proxy.since(mark));
    }
  }
  return { local: latency(times.local), s3: latency(times.s3), s3_proxied: latency(times.s3_proxied), requests: summarize(requests, runs) };
}

export async function coldSearches(bin: string, targets: Targets, queries: string[], runs: number, proxy: CountingProxy): Promise<ColdResult> {
  const search = async (target: Target, i: number) => (await mustRun(bin, ["--project", target.project, "--json", "--in-process", "search", target.indexId, queries[i % queries.length] as string], target.env)).ms;
  for (const way of WAYS) await search(targetOf(targets, way), 0);
  return inTurns(targets, runs, proxy, search);
}

/** Requests are a bucket replica's from its spawn until ready, per start. */
export type ReadyResult = ColdResult;

export async function replicaReady(bin: string, targets: Targets, starts: number, proxy: CountingProxy): Promise<ReadyResult> {
  return inTurns(targets, starts, proxy, async (target) => {
    const server = await startServe(bin, target.project, target.env);
    await server.stop();
    return server.readyMs;
  });
}
