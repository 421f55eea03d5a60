/** The table `npm run bench:s3` prints (its --json prints the same report as JSON). */
import type { IngestResult } from "./s3-ingest.js";
import type { TakeoverResult } from "./s3-lease.js";
import type { ColdResult, Latency, ReadyResult, Requests, WarmResult } from "./s3-search.js";
import { percentile } from "./stats.js";

export interface S3Report {
  objects: number;
  machine: { cores: number; node: string; load_average_1m: { start: number; end: number } };
  /** Seconds the cached local project took to build (add, index, settle), when it was built. */
  local_build_s: number;
  warm: WarmResult;
  cold: ColdResult;
  ready: ReadyResult;
  ingests: IngestResult[];
  takeover: TakeoverResult;
}

const median = (ms: number[]) => Math.round(percentile(ms, 50));
const both = (l: Latency) => `${l.p50_ms} / ${l.p95_ms}`;
const ratio = (s3: number, local: number) => `${(s3 / local).toFixed(2)}×`;

function table(rows: string[][]): string[] {
  const widths = (rows[0] as string[]).map((_, i) => Math.max(...rows.map((row) => (row[i] as string).length)));
  return rows.map((row) => "  " + row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join("   "));
}

function where(what: string, unit: string, requests: Requests): string[] {
  return [
    `  ${what}: ${requests.count} S3 requests per ${unit} (${requests.mb} MB read), answered in ${requests.server_ms} ms summed; by kind, per ${unit}:`,
    ...Object.entries(requests.where).map(([kind, n]) => `      ${String(n).padStart(6)}  ${kind}`),
  ];
}

export function renderReport(r: S3Report): string {
  const { warm, cold, ready, takeover } = r;
  const searchRows = [
    ["", "local", "S3 (RGW)", "S3 ÷ local", "S3 requests", "target"],
    ["warm hybrid search p50 / p95, ms (serve)", both(warm.local), both(warm.s3), ratio(warm.s3.p50_ms, warm.local.p50_ms), `${warm.requests.count} / search`, "p50 ≤ 2× local"],
    [`cold CLI search p50 / p95, ms (${cold.s3.runs} runs)`, both(cold.local), both(cold.s3), ratio(cold.s3.p50_ms, cold.local.p50_ms), `${cold.requests.count} / search`, "≤ 1,500 ms"],
    [`serve --no-worker to /readyz 200, ms (${ready.s3.runs} starts)`, both(ready.local), both(ready.s3), ratio(ready.s3.p50_ms, ready.local.p50_ms), `${ready.requests.count} / start`, ""],
  ];
  const ingestRows = [
    ["workers", "indexes", "add, s", "add objects/s", "rows written, s", "READY, s", "READY objects/s", "settled, s", "by worker", "requests / object"],
    ...r.ingests.map((i) => [i.workers, i.indexes, i.add_s, i.add_objects_per_s, i.written_s, i.ready_s, i.ready_objects_per_s, i.settled_s, i.by_worker.join(" + "), i.index_requests_per_object].map(String)),
  ];
  const runs = (ms: number[]) => `median ${median(ms)} ms (${ms.join(", ")})`;
  const other = takeover.other_host_ms.length === 0 ? `not measured: ${takeover.other_host_note}` : runs(takeover.other_host_ms);
  return [
    `semsearch on S3 — ${r.objects.toLocaleString("en-US")} objects, Ceph RGW on 127.0.0.1, ${r.machine.cores} cores, Node ${r.machine.node}`,
    `  load average (1 min): ${r.machine.load_average_1m.start} at start, ${r.machine.load_average_1m.end} at end; the local project took ${r.local_build_s} s to build`,
    "",
    ...table(searchRows),
    `    (warm: ${warm.s3.runs} searches each, sequential, one connection; the bucket server also read its keys ${warm.background_requests_per_s} times/s in the background, not counted above)`,
    `    (S3 times are of processes reaching the server directly; the same runs through the counting proxy, p50: warm ${warm.s3_proxied.p50_ms}, cold ${cold.s3_proxied.p50_ms}, ready ${ready.s3_proxied.p50_ms} ms)`,
    "",
    ...where("warm S3 search", "search", warm.requests),
    ...where("cold S3 CLI search", "search", cold.requests),
    ...where("replica until ready", "start", ready.requests),
    "",
    "  ingest into the bucket (objects add, then index create with foreground workers already running; times from the first index create):",
    ...table(ingestRows).map((line) => `  ${line}`),
    "",
    `  write lease takeover after SIGKILL of its holder (SEMSEARCH_LEASE_SECONDS=${takeover.lease_seconds}), kill → the next add's exit:`,
    `    same host (the holder's pid is seen gone): ${runs(takeover.same_host_ms)}`,
    `    other host (its lease must expire): ${other}`,
    `    the same one-object add, lease free: ${runs(takeover.uncontended_ms)}`,
    "",
  ].join("\n");
}
