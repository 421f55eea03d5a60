/** Running the built CLI for the torture run, and checking a project's invariants afterwards. */
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { LanceStore } from "../engine/store/lance-store.js";

export const BIN = fileURLToPath(new URL("../../bin/semsearch", import.meta.url));

export interface Run {
  args: string[];
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface RunOptions {
  input?: string | Buffer;
  env?: Record<string, string>;
  cwd?: string;
  timeoutMs?: number;
  /** SIGKILL the command after this many ms (a kill at a random moment) */
  killAfterMs?: number;
}

/** Every command run, for the report. */
export const runs: Run[] = [];

export function cli(args: string[], options: RunOptions = {}): Promise<Run> {
  return new Promise((resolve) => {
    const env = { ...process.env, NO_COLOR: "1", ...options.env };
    const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, options.timeoutMs ?? 180_000);
    const killer = options.killAfterMs === undefined ? undefined : setTimeout(() => child.kill("SIGKILL"), options.killAfterMs);
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.stdin.on("error", () => {});
    child.stdin.end(options.input ?? "");
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (killer) clearTimeout(killer);
      const run = { args, code, signal, stdout, stderr, timedOut };
      runs.push(run);
      resolve(run);
    });
  });
}

/** A crash: exit 1 (a bug), death by a signal nobody sent on purpose, or a hang. */
export function crashed(run: Run, killedOnPurpose = false): boolean {
  return run.timedOut || run.code === 1 || (run.signal !== null && !killedOnPurpose);
}

/** Ids of a project's stored objects, read from LanceDB. */
export async function storedIds(project: string): Promise<string[]> {
  if (!existsSync(path.join(project, "data"))) return [];
  const store = await LanceStore.open(path.join(project, "data"));
  try {
    return (await store.hasTable("objects")) ? (await store.rowIds("objects")).sort() : [];
  } finally {
    store.close();
  }
}

export interface Consistency {
  problems: string[];
  ids: string[];
}

/**
 * Waits for every index to be built, then checks: stored ids are distinct; every index has nothing
 * pending, READY + ERROR = stored objects, and one row per stored object not in ERROR; no journal
 * or spooled input is left.
 */
export async function checkProject(project: string): Promise<Consistency> {
  const problems: string[] = [];
  // A command that opens the store first: it finishes any interrupted write before ids are read here.
  const opened = await cli(["--project", project, "--json", "objects", "list", "--limit", "1"]);
  if (opened.code !== 0) problems.push(`objects list exited ${opened.code ?? opened.signal}: ${opened.stderr.trim().slice(0, 300)}`);
  const ids = await storedIds(project);
  if (new Set(ids).size !== ids.length) problems.push(`duplicate object ids (${ids.length} rows, ${new Set(ids).size} ids)`);
  const list = await cli(["--project", project, "--json", "index", "list"]);
  if (list.code !== 0) return { problems: [...problems, `index list exited ${list.code}: ${list.stderr.trim()}`], ids };
  const indexes = (JSON.parse(list.stdout) as { indexes: { id: string }[] }).indexes;
  const store = await LanceStore.open(path.join(project, "data"));
  try {
    for (const { id } of indexes) {
      const waited = await cli(["--project", project, "--json", "index", "status", id, "--wait", "--timeout", "300"]);
      if (waited.code !== 0 && waited.code !== 7) {
        problems.push(`${id}: index status --wait exited ${waited.code ?? waited.signal}: ${waited.stderr.trim().slice(0, 300)}`);
        continue;
      }
      const status = (JSON.parse(waited.stdout) as { status: Record<string, number> }).status;
      if (status.UPLOADED !== 0 || status.PROCESSING !== 0) problems.push(`${id}: still pending after --wait: ${JSON.stringify(status)}`);
      if ((status.READY ?? 0) + (status.ERROR ?? 0) !== ids.length) problems.push(`${id}: READY ${status.READY} + ERROR ${status.ERROR} ≠ ${ids.length} stored objects`);
      const rows = await store.rowIds(`index_${id}`);
      if (new Set(rows).size !== rows.length) problems.push(`${id}: duplicate index rows`);
      const stored = new Set(ids);
      const orphans = rows.filter((row) => !stored.has(row));
      if (orphans.length > 0) problems.push(`${id}: ${orphans.length} index rows of objects that are not stored (${orphans.slice(0, 3).join(", ")})`);
      if (rows.length !== status.READY) problems.push(`${id}: ${rows.length} index rows, but READY ${status.READY}`);
      if (await store.hasTable(`images_${id}`)) {
        // Image indexes: each image once, only of objects the index holds.
        const images = await store.rowIds(`images_${id}`);
        if (new Set(images).size !== images.length) problems.push(`${id}: duplicate image rows`);
        const held = new Set(rows);
        const stray = (await store.segmentObjectIds(`images_${id}`)).filter((object) => !held.has(object));
        if (stray.length > 0) problems.push(`${id}: image rows of ${stray.length} objects the index does not hold (${stray.slice(0, 3).join(", ")})`);
      }
    }
  } finally {
    store.close();
  }
  for (const file of ["add.journal", "delete.journal"]) if (existsSync(path.join(project, file))) problems.push(`${file} left behind`);
  const tmp = path.join(project, "tmp");
  if (existsSync(tmp) && readdirSync(tmp).length > 0) problems.push(`spooled input left in tmp/: ${readdirSync(tmp).join(", ")}`);
  return { problems, ids };
}
