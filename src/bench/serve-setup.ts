/**
 * What `npm run bench:serve` measures against: a built project of the bench corpus, cached under
 * .cache/bench/serve-<n> (git-ignored) because the engine embeds every object to build it, and the
 * server as a child process (`semsearch serve`), so that it does not share an event loop with the
 * load generator, with its resident memory read from /proc.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { Engine } from "../engine/index.js";
import { loadCorpus } from "./corpus.js";
import { timed } from "./stats.js";

export interface ServeProject {
  dir: string;
  indexId: string;
  /** A read-only key, so requests pay the key check that a real deployment pays. */
  key: string;
  queries: string[];
}

/** Queries of the bench corpus: the count is part of its cache's key, so it matches `npm run bench`. */
const CORPUS_QUERIES = 50;

/** The project of `size` corpus objects with a READY text index, built first when not cached. */
export async function loadServeProject(size: number, cacheDir: string, evalDir: string, log: (m: string) => void): Promise<ServeProject> {
  const root = path.join(cacheDir, `serve-${size}`);
  const meta = path.join(root, "bench.json");
  if (existsSync(meta)) return JSON.parse(readFileSync(meta, "utf8")) as ServeProject;
  // No bench.json: never built, or a build cut off; start again rather than trust half an index.
  rmSync(root, { recursive: true, force: true });
  const corpus = await loadCorpus(size, CORPUS_QUERIES, evalDir, cacheDir, log);
  const dir = path.join(root, "project");
  const engine = new Engine({ projectDir: dir });
  try {
    log(`building the ${size}-object project in ${dir} (once; the engine embeds every object)…`);
    const [project, ms] = await timed(async () => {
      await engine.addObjects([{ text: corpus.docs.map((doc) => JSON.stringify(doc)).join("\n"), source: "bench" }]);
      const { id } = await engine.createIndex({ configuration: { index_type: { name: "text" } } });
      let shown = -1;
      const onProgress = (p: { done: number; total: number }) => p.done !== shown && process.stderr.write(`\r  ${(shown = p.done)}/${p.total}`);
      await engine.waitForIndex(id, { onProgress });
      const { key } = await engine.createKey({ name: "bench-serve", readOnly: true });
      return { dir, indexId: id, key, queries: corpus.queries };
    });
    log(`\n  built in ${(ms / 1000).toFixed(0)} s`);
    writeFileSync(meta, JSON.stringify(project));
    return project;
  } finally {
    await engine.close();
  }
}

export interface ServerProcess {
  url: string;
  pid: number;
  /**
   * Resident memory now, in MiB, from /proc/<pid>/status (NaN when it cannot be read): all of it
   * (VmRSS), and the anonymous part (RssAnon: heaps, not LanceDB's mapped files), where a leak shows.
   */
  memory(): { rss: number; anon: number };
  /** The highest RSS seen so far, in MiB, sampled every 200 ms: the end of a phase alone would miss a spike. */
  peakRss(): number;
  /** SIGTERM, then resolves with the exit code once it has stopped. */
  stop(): Promise<number | null>;
}

/** Starts `semsearch serve` on a free loopback port and resolves once it prints its URL. */
export async function spawnServer(bin: string, project: string): Promise<ServerProcess> {
  // No access log: one JSON line on stderr per request would make the bench measure the pipe to us.
  const child = spawn(process.execPath, [bin, "--project", project, "serve", "--host", "127.0.0.1", "--port", "0", "--no-access-log"], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NO_COLOR: "1" },
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    void exited.then((code) => reject(new Error(`semsearch serve exited (${code}) before listening:\n${stderr}`)));
  });
  const pid = child.pid as number;
  const memory = () => {
    let status = "";
    try {
      status = readFileSync(`/proc/${pid}/status`, "utf8");
    } catch {
      // not Linux, or the server is gone: NaN
    }
    const mb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN) / 1024;
    return { rss: mb("VmRSS"), anon: mb("RssAnon") };
  };
  let peak = memory().rss;
  const sampler = setInterval(() => (peak = Math.max(peak, memory().rss)), 200);
  return {
    url,
    pid,
    memory,
    peakRss: () => Math.max(peak, memory().rss),
    async stop() {
      clearInterval(sampler);
      child.kill("SIGTERM");
      const code = await exited;
      if (code !== 0) process.stderr.write(`semsearch serve exited with ${code}:\n${stderr}\n`);
      return code;
    },
  };
}
