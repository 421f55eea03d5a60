/**
 * Search figures for `npm run bench:s3`, each on a local project and on the same corpus in a bucket
 * (through the counting proxy, whose requests are what "S3 requests" counts):
 * - warm: `semsearch serve` on each, the same hybrid searches over one kept-alive connection to each,
 *   sequential, in alternating blocks (so that both see the same moments of a shared machine) after a
 *   warm-up; requests per search are the proxy's count during the bucket's blocks over its searches,
 *   leaving out the server's background reading of its keys (every second, whatever the load:
 *   reported apart, per second);
 * - cold: the CLI (`bin/semsearch --in-process search`, the package's bin) as a new process per
 *   search, timed from spawn to exit, local and bucket taking turns, after one unmeasured run of each
 *   (the page cache warm, as for a person's second command);
 * - a replica's time to ready: `semsearch serve --no-worker` from spawn until `GET /readyz` first
 *   answers 200 (looked at every 25 ms), and the requests it made meanwhile.
 */
import type { CountingProxy, ProxiedRequest } from "./s3-proxy.js";
import { mustRun, startServe } from "./s3-setup.js";
import { percentile } from "./stats.js";

export interface Target {
  /** project directory or s3:// address */
  project: string;
  indexId: string;
  env: NodeJS.ProcessEnv;
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
  requests: Requests;
  background_requests_per_s: number;
}

export async function warmSearches(bin: string, local: Target, s3: Target, queries: string[], searches: number, proxy: CountingProxy, log: (m: string) => void): Promise<WarmResult> {
  const [localServer, s3Server] = [await startServe(bin, local.project, local.env), await startServe(bin, s3.project, s3.env)];
  try {
    const query = (i: number) => queries[i % queries.length] as string;
    for (let i = 0; i < 2 * queries.length; i++) {
      await searchOnce(localServer.url, local.indexId, query(i));
      await searchOnce(s3Server.url, s3.indexId, query(i));
    }
    log(`  warmed up (${2 * queries.length} searches each); ${searches} searches each, alternating blocks of 25…`);
    const times = { local: [] as number[], s3: [] as number[] };
    const during: ProxiedRequest[] = [];
    const phaseMark = proxy.mark();
    const started = performance.now();
    for (let block = 0; block < searches; block += 25) {
      const end = Math.min(block + 25, searches);
      for (let i = block; i < end; i++) times.local.push(await searchOnce(localServer.url, local.indexId, query(i)));
      const mark = proxy.mark();
      for (let i = block; i < end; i++) times.s3.push(await searchOnce(s3Server.url, s3.indexId, query(i)));
      during.push(...proxy.since(mark));
    }
    const seconds = (performance.now() - started) / 1000;
    return {
      local: latency(times.local),
      s3: latency(times.s3),
      requests: summarize(during.filter((request) => !isKeyRefresh(request)), searches),
      background_requests_per_s: round(proxy.since(phaseMark).filter(isKeyRefresh).length / seconds, 1),
    };
  } finally {
    await Promise.all([localServer.stop(), s3Server.stop()]);
  }
}

export interface ColdResult {
  local: Latency;
  s3: Latency;
  requests: Requests;
}

export async function coldSearches(bin: string, local: Target, s3: Target, queries: string[], runs: number, proxy: CountingProxy): Promise<ColdResult> {
  const search = (target: Target, i: number) => mustRun(bin, ["--project", target.project, "--json", "--in-process", "search", target.indexId, queries[i % queries.length] as string], target.env);
  await search(local, 0);
  await search(s3, 0);
  const times = { local: [] as number[], s3: [] as number[] };
  const requests: ProxiedRequest[] = [];
  for (let i = 1; i <= runs; i++) {
    times.local.push((await search(local, i)).ms);
    const mark = proxy.mark();
    times.s3.push((await search(s3, i)).ms);
    requests.push(...proxy.since(mark));
  }
  return { local: latency(times.local), s3: latency(times.s3), requests: summarize(requests, runs) };
}

export interface ReadyResult {
  local: Latency;
  s3: Latency;
  /** Requests a bucket replica made from its spawn until ready, per start. */
  requests: Requests;
}

export async function replicaReady(bin: string, local: Target, s3: Target, starts: number, proxy: CountingProxy): Promise<ReadyResult> {
  const times = { local: [] as number[], s3: [] as number[] };
  const requests: ProxiedRequest[] = [];
  for (let i = 0; i < starts; i++) {
    const here = await startServe(bin, local.project, local.env);
    times.local.push(here.readyMs);
    await here.stop();
    const mark = proxy.mark();
    const replica = await startServe(bin, s3.project, s3.env);
    requests.push(...proxy.since(mark));
    times.s3.push(replica.readyMs);
    await replica.stop();
  }
  return { local: latency(times.local), s3: latency(times.s3), requests: summarize(requests, starts) };
}
