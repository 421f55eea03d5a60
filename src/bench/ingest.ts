/**
 * `npm run bench:ingest`: ingest through the real CLI, as a user would. Writes a JSON Lines file of
 * generated one-sentence objects, then on a fresh project runs `objects add <file>` under
 * /usr/bin/time -v (elapsed, peak RSS of the CLI), `index create` and waits for READY (objects/s,
 * the worker's peak RSS from worker.log), measures the project on disk, and finally adds 10 new
 * objects and times how long until a lexical search finds all of them.
 *
 *   npm run bench:ingest -- [--objects 100000]     (prints JSON, also saved under bench/results/)
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { timedCli } from "./timed-cli.js";
import { generateObjects } from "./generate.js";
import { dirSize } from "./peers/size.js";

const { values } = parseArgs({ options: { objects: { type: "string", default: "100000" } } });
const count = Number(values.objects);
const dir = path.resolve(".cache", "bench", `ingest-${count}`);
const project = path.join(dir, "project");
const file = path.join(dir, "objects.jsonl");
const bin = path.resolve("bin", "semsearch");
const log = (message: string) => process.stderr.write(`${message}\n`);

function cli(args: string[], input?: string): string {
  return execFileSync(process.execPath, [bin, "--project", project, "--json", ...args], { input, encoding: "utf8", maxBuffer: 1 << 30 });
}


async function waitReady(index: string): Promise<void> {
  for (;;) {
    const status = JSON.parse(cli(["index", "status", index])).status;
    if (status.UPLOADED === 0 && status.PROCESSING === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

async function workerExit(): Promise<void> {
  for (let i = 0; i < 300 && JSON.parse(cli(["worker", "status"])).running; i++) await new Promise((resolve) => setTimeout(resolve, 1000));
}

async function main(): Promise<void> {
  mkdirSync(dir, { recursive: true });
  if (!existsSync(file)) {
    writeFileSync(file, generateObjects(count, 1234).map((o) => JSON.stringify({ id: o.id, title: o.title })).join("\n") + "\n");
  }
  rmSync(project, { recursive: true, force: true });
  log(`objects add ${file} …`);
  const add = timedCli(bin, project, ["objects", "add", file]);
  const started = Date.now();
  const { id } = JSON.parse(cli(["index", "create"]));
  log(`indexing ${count} objects into ${id} …`);
  await waitReady(id);
  const indexSeconds = (Date.now() - started) / 1000;
  // let the worker finish optimizing and exit, so the size is of a settled project
  await workerExit();
  const workerPeaks = [...readFileSync(path.join(project, "worker.log"), "utf8").matchAll(/peak RSS (\d+) MB/g)].map((m) => Number(m[1]));
  const diskMb = (await dirSize(project)) / 1e6;

  const fresh = Array.from({ length: 10 }, (_, i) => ({ id: `fresh-${i}`, title: `zyxwv${i} a freshly added object about quokkas` }));
  const addedAt = Date.now();
  cli(["objects", "add", "-"], fresh.map((o) => JSON.stringify(o)).join("\n"));
  let searchableSeconds = Number.NaN;
  for (let i = 0; i < 600; i++) {
    const found = JSON.parse(cli(["search", id, "quokkas", "--mode", "lexical", "--limit", "20"])).results.filter((r: { id: string }) => r.id.startsWith("fresh-"));
    if (found.length === fresh.length) {
      searchableSeconds = (Date.now() - addedAt) / 1000;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await waitReady(id);
  const readySeconds = (Date.now() - addedAt) / 1000;

  const result = {
    objects: count,
    node: process.version,
    add: { seconds: add.seconds, objects_per_second: Math.round(count / add.seconds), cli_peak_rss_mb: add.peakMb },
    index: { seconds: Math.round(indexSeconds), objects_per_second: Math.round((count / indexSeconds) * 10) / 10, worker_peak_rss_mb: Math.max(...workerPeaks) },
    disk_mb: Math.round(diskMb),
    input_mb: Math.round(readFileSync(file).length / 1e6),
    ten_more: { searchable_seconds: searchableSeconds, ready_seconds: readySeconds },
  };
  mkdirSync("bench/results", { recursive: true });
  writeFileSync(path.join("bench/results", `ingest-${count}.json`), JSON.stringify(result, null, 2));
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

await main();
