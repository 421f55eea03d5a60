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
  /** Each command `runs` times, taking turns, with the floor measured in the same turns. */
  const phase = (extra: string[]) => {
    const times = new Map<string, number[]>(commands.map(([name]) => [name, []]));
    for (const [, args] of commands) run([...args(0), ...extra]); // file caches warm, as for a person's second command
    for (let i = 0; i < runs; i++) {
      floor.push(run(["-e", ""]));
      for (const [name, args] of commands) times.get(name)?.push(run([...args(i), ...extra]));
    }
    return times;
  };
  log(`${runs} runs of each command on ${values.objects} objects, in their own process…`);
  const own = phase(["--in-process"]);
  log("…and with semsearch serve running, answering over the local socket…");
  const server = await spawnServer(BIN, project.dir);
  let served: Map<string, number[]>;
  try {
    run(cli("--json", "search", project.indexId, "warm up")); // waits out the server's own warm-up
    served = phase([]);
  } finally {
    await server.stop();
  }

  const stat = (ms: number[] = []) => ({ p50_ms: Math.round(percentile(ms, 50)), p95_ms: Math.round(percentile(ms, 95)) });
  const rows = [
    { command: 'node -e "" (the floor)', own: stat(floor), served: null },
    ...commands.map(([name]) => ({ command: name, own: stat(own.get(name)), served: name === "--help" ? null : stat(served.get(name)) })),
  ];
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ objects: Number(values.objects), runs, node: process.version, commands: rows }, null, 2)}\n`);
    return;
  }
  const cell = (s: { p50_ms: number; p95_ms: number } | null) => (s ? `${s.p50_ms} / ${s.p95_ms}` : "—").padStart(20);
  process.stdout.write(`\nCold CLI commands, ${values.objects} objects, ${runs} runs each (${process.version}); p50 / p95 ms\n`);
  process.stdout.write(`${"command".padEnd(26)}${"own process".padStart(20)}${"serve running".padStart(20)}\n`);
  for (const row of rows) process.stdout.write(`${row.command.padEnd(26)}${cell(row.own)}${cell(row.served)}\n`);
}

await main();
