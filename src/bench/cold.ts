/**
 * `npm run bench:cold`: what a person running the CLI in a loop or a script waits for. Each command
 * is a new `node bin/semsearch` process on the cached bench project (10,000 objects by default), timed
 * from spawn to exit; the commands take turns, so a busy moment of the machine falls on all of them.
 * Each is timed twice: in its own process (`--in-process`: a search loads the model runtime and the
 * model, the others LanceDB), and answered by a running `semsearch serve` of the project over the
 * local socket. The floor is Node itself starting and exiting (`node -e ""`).
 *
 *   npm run bench:cold -- [--runs 15] [--objects 10000] [--json]
 */
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadServeProject, spawnServer } from "./serve-setup.js";
import { percentile } from "./stats.js";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "15" },
    objects: { type: "string", default: "10000" },
    json: { type: "boolean", default: false },
  },
});
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = path.join(ROOT, "bin", "semsearch");
const log = (message: string) => process.stderr.write(`${message}\n`);

/** A one-shot search's time over Node's bare start, at most (the median of turn-by-turn ratios). */
const SEARCH_TARGET = 5;

/** Wall time of one process, in ms; throws when it fails. */
function run(args: string[]): number {
  const start = performance.now();
  const result = spawnSync(process.execPath, args, { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
  const ms = performance.now() - start;
  if (result.status !== 0) throw new Error(`${args.join(" ")} exited ${result.status}: ${result.stderr}`);
  return ms;
}

async function main() {
  const runs = Number(values.runs);
  const project = await loadServeProject(Number(values.objects), path.join(ROOT, ".cache", "bench"), path.resolve(ROOT, "..", "shared", "eval"), log);
  const cli = (...args: string[]) => [BIN, "--project", project.dir, ...args];
  const query = (i: number) => project.queries[i % project.queries.length] as string;
  const listed = spawnSync(process.execPath, cli("--json", "objects", "list", "--limit", "1"), { encoding: "utf8" });
  const objectId = (JSON.parse(listed.stdout) as { objects: { id: string }[] }).objects[0]?.id ?? "none";
  const commands: [string, (i: number) => string[]][] = [
    ["--help", () => cli("--help")],
    ["index list", () => cli("index", "list")],
    ["index status", () => cli("index", "status", project.indexId)],
    ["objects get", () => cli("objects", "get", objectId)],
    ["search", (i) => cli("--json", "search", project.indexId, query(i))],
  ];
  const floor: number[] = [];
  /** Each command's time over the floor's of the same turn: a ratio holds across machines and loads, an absolute time does not. */
  const ratios = new Map<string, number[]>();
  /** Each command `runs` times, taking turns, with the floor measured in the same turns. */
  const phase = (extra: string[], label: string) => {
    const times = new Map<string, number[]>(commands.map(([name]) => [name, []]));
    for (const [, args] of commands) run([...args(0), ...extra]); // file caches warm, as for a person's second command
    for (let i = 0; i < runs; i++) {
      const base = run(["-e", ""]);
      floor.push(base);
      for (const [name, args] of commands) {
        const ms = run([...args(i), ...extra]);
        times.get(name)?.push(ms);
        ratios.set(`${label}:${name}`, [...(ratios.get(`${label}:${name}`) ?? []), ms / base]);
      }
    }
    return times;
  };
  log(`${runs} runs of each command on ${values.objects} objects, in their own process…`);
  const own = phase(["--in-process"], "own");
  log("…and with semsearch serve running, answering over the local socket…");
  const server = await spawnServer(BIN, project.dir);
  let served: Map<string, number[]>;
  try {
    run(cli("--json", "search", project.indexId, "warm up")); // waits out the server's own warm-up
    served = phase([], "served");
  } finally {
    await server.stop();
  }

  /** p50 and p95 ms, and the median of the turn-by-turn ratios to the floor. */
  const stat = (ms: number[] = [], key?: string) => ({
    p50_ms: Math.round(percentile(ms, 50)),
    p95_ms: Math.round(percentile(ms, 95)),
    ...(key ? { floor_ratio: Math.round(percentile(ratios.get(key) ?? [], 50) * 10) / 10 } : {}),
  });
  const rows = [
    { command: 'node -e "" (the floor)', own: stat(floor), served: null },
    ...commands.map(([name]) => ({ command: name, own: stat(own.get(name), `own:${name}`), served: name === "--help" ? null : stat(served.get(name), `served:${name}`) })),
  ];
  const load = loadavg().map((value) => value.toFixed(2)).join(" ");
  const search = rows.at(-1)?.own.floor_ratio ?? Number.NaN;
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ objects: Number(values.objects), runs, node: process.version, load_average: load, target_search_floor_ratio: SEARCH_TARGET, commands: rows }, null, 2)}\n`);
    return;
  }
  const cell = (s: { p50_ms: number; p95_ms: number; floor_ratio?: number } | null) => (s ? `${s.p50_ms} / ${s.p95_ms}${s.floor_ratio === undefined ? "" : ` (${s.floor_ratio.toFixed(1)}×)`}` : "—").padStart(24);
  process.stdout.write(`\nCold CLI commands, ${values.objects} objects, ${runs} runs each (${process.version}, load average ${load}); p50 / p95 ms (× the floor, turn by turn)\n`);
  process.stdout.write(`${"command".padEnd(26)}${"own process".padStart(24)}${"serve running".padStart(24)}\n`);
  for (const row of rows) process.stdout.write(`${row.command.padEnd(26)}${cell(row.own)}${cell(row.served)}\n`);
  process.stdout.write(`\nA search in its own process: ${search.toFixed(1)}× Node's bare start (target ≤ ${SEARCH_TARGET}×): ${search <= SEARCH_TARGET ? "met" : "NOT met"}\n`);
}

await main();
