/**
 * `npm run bench:files`: files and folders as objects (issue 29), through the real CLI.
 *
 * 1. Generates a folder of N Markdown files (front matter, a heading, 2–4 sentences; default 10,000)
 *    under .cache/bench (git-ignored), and times `objects add <folder>` on a fresh project (files/s,
 *    peak RSS), then a second add with nothing changed (the stat shortcut) and one after touching
 *    every file's time (each file read and hashed again, nothing written).
 * 2. Where the time of the first add goes: the walk, reading and hashing, and parsing the Markdown in
 *    one thread (the add parses in a thread per core), measured in this process with the same modules.
 * 3. `--watch`: with an index built and `semsearch serve` answering searches, edits a file 100 times
 *    (each edit adds a new word) and times from the write until a search for that word returns the
 *    file: p50 and p95.
 *
 *   npm run bench:files -- [--files 10000] [--edits 100] [--watch-only]     (prints JSON, also saved under bench/results/)
 *
 * `--watch-only` measures the watch again on the project a full run left; `--add-only` stops after the adds.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { timedCli } from "./timed-cli.js";
import { generateObjects } from "./generate.js";
import { spawnServer } from "./serve-setup.js";
import { walk } from "../engine/files/walk.js";
import { contentHash, fileObjects } from "../engine/files/file-object.js";

const { values } = parseArgs({ options: { files: { type: "string", default: "10000" }, edits: { type: "string", default: "100" }, "watch-only": { type: "boolean", default: false }, "add-only": { type: "boolean", default: false } } });
const count = Number(values.files);
const edits = Number(values.edits);
const dir = path.resolve(".cache", "bench", `files-${count}`);
const notes = path.join(dir, "notes");
const project = path.join(dir, "project");
const bin = path.resolve("bin", "semsearch");
const log = (message: string) => process.stderr.write(`${message}\n`);

function cli(args: string[]): string {
  return execFileSync(process.execPath, [bin, "--project", project, "--json", ...args], { encoding: "utf8", maxBuffer: 1 << 30 });
}


function generateFolder(): void {
  if (existsSync(path.join(notes, ".complete"))) return;
  rmSync(notes, { recursive: true, force: true });
  generateObjects(count, 2911).forEach((object, i) => {
    const sub = path.join(notes, `part-${String(Math.floor(i / 500)).padStart(2, "0")}`);
    if (i % 500 === 0) mkdirSync(sub, { recursive: true });
    writeFileSync(path.join(sub, `${object.id}.md`), `---\ntitle: ${object.title}\ntags: [bench, t${i % 17}]\n---\n# ${object.title}\n\n${object.body}\n`);
  });
  writeFileSync(path.join(notes, ".complete"), "");
}

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

async function stages(): Promise<{ walk_s: number; read_and_hash_s: number; parse_one_thread_s: number }> {
  let start = process.hrtime.bigint();
  const walked = await walk([notes], { maxFileSize: 10 * 1024 * 1024 });
  const walkS = seconds(start);
  start = process.hrtime.bigint();
  const contents = walked.files.map((file) => readFileSync(file.file));
  for (const bytes of contents) contentHash(bytes);
  const readS = seconds(start);
  start = process.hrtime.bigint();
  for (const [i, file] of walked.files.entries()) await fileObjects(file, contents[i] as Buffer);
  return { walk_s: round(walkS), read_and_hash_s: round(readS), parse_one_thread_s: round(seconds(start)) };
}

async function watchLatency(): Promise<{ p50_ms: number; p95_ms: number; max_ms: number }> {
  const { key } = JSON.parse(cli(["keys", "create", "--name", "bench-files", "--read-only"])) as { key: string };
  const server = await spawnServer(bin, project);
  const watcher = spawn(process.execPath, [bin, "--project", project, "--json", "objects", "add", notes, "--watch"], { stdio: ["ignore", "pipe", "pipe"] });
  const lines = createInterface({ input: watcher.stdout });
  await new Promise<void>((resolve) => lines.on("line", (line) => line.includes('"reconciled"') && resolve()));
  const index = (JSON.parse(cli(["index", "list"])) as { indexes: { id: string }[] }).indexes[0]?.id as string;
  const target = path.join(notes, "part-00", "edited.md");
  const times: number[] = [];
  try {
    for (let i = 0; i < edits; i++) {
      const word = `zq${i.toString(36)}xv${Math.floor(Math.random() * 1e6).toString(36)}`;
      const start = Date.now();
      writeFileSync(target, `# Edited\n\nThis note now mentions ${word}.\n`);
      for (;;) {
        // (lexical only, and the body must hold the word: the vector part, or a typo match of the word
        // of the edit before, would find the file before this edit is indexed)
        const response = await fetch(`${server.url}/v1/indexes/${index}/search?query=${word}&limit=3&semantic_ratio=0&object_fields=body`, { headers: { authorization: `Bearer ${key}` } });
        const page = (await response.json()) as { results?: { id: string; object: { body?: string } }[] };
        if (!response.ok) throw new Error(`search answered ${response.status}: ${JSON.stringify(page)}`);
        if (page.results?.some((result) => result.id === "notes/part-00/edited.md" && result.object.body?.includes(word))) break;
        if (Date.now() - start > 60_000) throw new Error(`edit ${i} not searchable after 60 s`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      times.push(Date.now() - start);
    }
  } finally {
    watcher.kill("SIGINT");
    await server.stop();
  }
  times.sort((a, b) => a - b);
  return { p50_ms: percentile(times, 50), p95_ms: percentile(times, 95), max_ms: times.at(-1) as number };
}

async function main(): Promise<void> {
  if (values["watch-only"]) {
    process.stdout.write(`${JSON.stringify({ bench: "files", date: new Date().toISOString(), files: count, watch_write_to_searchable: { edits, ...(await watchLatency()) } }, null, 2)}\n`);
    return;
  }
  mkdirSync(dir, { recursive: true });
  generateFolder();
  rmSync(project, { recursive: true, force: true });
  log(`objects add ${notes} (${count} Markdown files) …`);
  const first = timedCli(bin, project, ["objects", "add", notes]);
  log(`  ${first.seconds} s; nothing changed …`);
  const unchanged = timedCli(bin, project, ["objects", "add", notes]);
  const later = new Date(Date.now() + 60_000);
  for (const part of readdirNames(notes)) for (const file of readdirNames(path.join(notes, part))) utimesSync(path.join(notes, part, file), later, later);
  log(`  every file's time changed …`);
  const touched = timedCli(bin, project, ["objects", "add", notes]);
  log("stages in this process …");
  const where = await stages();
  if (values["add-only"]) {
    process.stdout.write(`${JSON.stringify({ bench: "files", date: new Date().toISOString(), files: count, add: { seconds: first.seconds, files_per_s: Math.round(count / first.seconds), peak_rss_mb: first.peakMb, ...where }, re_add_unchanged: unchanged, re_add_touched: touched }, null, 2)}\n`);
    return;
  }
  log("index create --wait …");
  cli(["index", "create", "--searchable", "title,body", "--wait", "--timeout", "3600"]);
  log(`--watch: ${edits} edits, write to searchable …`);
  const latency = await watchLatency();
  const result = {
    bench: "files",
    date: new Date().toISOString(),
    files: count,
    add: { seconds: first.seconds, files_per_s: Math.round(count / first.seconds), peak_rss_mb: first.peakMb, ...where },
    re_add_unchanged: { seconds: unchanged.seconds, peak_rss_mb: unchanged.peakMb },
    re_add_touched: { seconds: touched.seconds, peak_rss_mb: touched.peakMb },
    watch_write_to_searchable: { edits, ...latency },
  };
  const out = JSON.stringify(result, null, 2);
  process.stdout.write(`${out}\n`);
  mkdirSync("bench/results", { recursive: true });
  writeFileSync(path.join("bench", "results", `files-${count}.json`), `${out}\n`);
}

function readdirNames(folder: string): string[] {
  return readdirSync(folder).filter((name) => !name.startsWith("."));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
