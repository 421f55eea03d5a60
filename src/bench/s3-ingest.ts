/**
 * Ingest into a bucket project for `npm run bench:s3`, on a fresh prefix each time: `objects add` of
 * the corpus file (timed from spawn to exit), then `workers` foreground `semsearch worker run`
 * processes (started, and registered, before any index exists, so `index create` starts no
 * background worker beside them), then `index create` of `indexes` indexes, timed from the first
 * create's spawn until the workers' logs add up to every object's rows written in every index
 * (searchable), until each index was optimized after that (READY, as `index status` and `--wait` say:
 * checked with `index status`), and until the object table was compacted after that (the last step
 * of a worker once caught up: the project is then settled, as a search should find it). The workers look
 * for new work every 1 s (their default). Every process goes through the counting proxy (requests per
 * object indexed): its hop is in these times, which the model's embedding dominates.
 */
import type { CountingProxy } from "./s3-proxy.js";
import { mustRun, startWorker, waitUntil, type WorkerEvent } from "./s3-setup.js";

export interface IngestOptions {
  bin: string;
  project: string;
  file: string;
  count: number;
  env: NodeJS.ProcessEnv;
  workers: number;
  indexes: number;
  proxy: CountingProxy;
}

export interface IngestResult {
  workers: number;
  indexes: number;
  add_s: number;
  add_objects_per_s: number;
  add_requests: number;
  /** From the first `index create` until every object's rows are written in every index (searchable). */
  written_s: number;
  /** Until every index is READY as `index status` and `--wait` say (its rows written, then optimized). */
  ready_s: number;
  /** Objects made READY per second, summed over the indexes. */
  ready_objects_per_s: number;
  /** Until the object table was compacted after that (the project settled). */
  settled_s: number;
  /** S3 requests from the first `index create` until settled, per object indexed. */
  index_requests_per_object: number;
  /** Objects each worker indexed (how the work was shared). */
  by_worker: number[];
  index_ids: string[];
}

const round = (value: number, places = 1) => Math.round(value * 10 ** places) / 10 ** places;

/**
 * When the merged logs (in order) first show `count` objects indexed in an index, and when that index
 * was first optimized after that (its objects READY); undefined before.
 */
function milestones(events: WorkerEvent[], id: string, count: number): { written?: number; ready?: number } {
  let done = 0;
  let written: number | undefined;
  for (const event of [...events].sort((a, b) => a.at - b.at)) {
    if (event.kind === "indexed" && event.index === id && (done += event.count) >= count) written ??= event.at;
    if (event.kind === "optimized" && event.index === id && written !== undefined) return { written, ready: event.at };
  }
  return { written };
}

export async function ingest(options: IngestOptions): Promise<IngestResult> {
  const { bin, project, count, env, proxy } = options;
  const cli = (...args: string[]) => mustRun(bin, ["--project", project, "--json", ...args], env);
  const addMark = proxy.mark();
  const add = await cli("objects", "add", options.file);
  const addRequests = proxy.since(addMark).length;
  const workers = await Promise.all(Array.from({ length: options.workers }, () => startWorker(bin, project, env)));
  try {
    const events = () => workers.flatMap((worker) => worker.events);
    const mark = proxy.mark();
    const started = performance.now();
    const ids: string[] = [];
    for (let i = 0; i < options.indexes; i++) ids.push((JSON.parse((await cli("index", "create")).stdout) as { id: string }).id);
    const last = (key: "written" | "ready") => Math.max(...ids.map((id) => milestones(events(), id, count)[key] ?? Number.NaN));
    await waitUntil(`${count} objects READY in ${ids.join(", ")}`, () => !Number.isNaN(last("ready")), 3 * 3600_000, 100);
    const ready = last("ready");
    const compactedAfter = () => events().find((event) => event.kind === "compacted" && event.at >= ready)?.at;
    await waitUntil("the object table's compaction", () => compactedAfter() !== undefined, 30 * 60_000, 100);
    const settled = compactedAfter() as number;
    const requests = proxy.since(mark).length;
    for (const id of ids) {
      const { status } = JSON.parse((await cli("index", "status", id)).stdout) as { status: { READY: number } };
      if (status.READY !== count) throw new Error(`${id}: ${status.READY} objects READY of ${count}, where the workers' logs say all`);
    }
    const seconds = (at: number) => round((at - started) / 1000);
    return {
      workers: options.workers,
      indexes: options.indexes,
      add_s: round(add.ms / 1000, 2),
      add_objects_per_s: Math.round(count / (add.ms / 1000)),
      add_requests: addRequests,
      written_s: seconds(last("written")),
      ready_s: seconds(ready),
      ready_objects_per_s: round((count * ids.length) / ((ready - started) / 1000)),
      settled_s: seconds(settled),
      index_requests_per_object: round(requests / (count * ids.length), 2),
      by_worker: workers.map((worker) => worker.events.reduce((sum, event) => sum + (event.kind === "indexed" ? event.count : 0), 0)),
      index_ids: ids,
    };
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
  }
}
