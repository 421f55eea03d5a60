/** Runs the built `bin/semsearch` as a subprocess; never throws. */
import { spawn, spawnSync, type SpawnSyncReturns } from "node:child_process";
import { mkdirSync, mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const BIN = path.join(ROOT, "bin", "semsearch");
export const SAMPLE = path.join(ROOT, "fixtures", "sample", "articles.jsonl");

export interface CliResult {
  /** the exit code; -1 when the process was ended by a signal */
  exitCode: number;
  /** the signal that ended the process (SIGKILL from a failpoint, or the timeout), if any */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Variables by which onnxruntime (and other libraries) tell a CI run, and onnxruntime's own telemetry
 * switches: with any of them set, onnxruntime keeps its telemetry off by itself, and a test would not
 * see what a user's shell gets. Tests run semsearch without them.
 */
const CI_VARIABLES = ["CI", "TF_BUILD", "GITHUB_ACTIONS", "GITLAB_CI", "CIRCLECI", "TRAVIS", "JENKINS_URL", "CODEBUILD_BUILD_ID", "BUILDKITE", "TEAMCITY_VERSION", "APPVEYOR", "BITBUCKET_BUILD_NUMBER", "SYSTEM_TEAMFOUNDATIONCOLLECTIONURI", "ORT_DISABLE_TELEMETRY", "ORT_TELEMETRY_DISABLED", "ORT_RUNNING_UNIT_TESTS"];

/** The environment a command gets: this process's, without CI's variables, colour off, then `extra` (an undefined value removes a variable). */
export function userEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1" };
  for (const name of CI_VARIABLES) delete env[name];
  return { ...env, ...extra };
}

export interface RunOptions {
  /** standard input's bytes (a string is written as UTF-8) */
  input?: string | Buffer;
  cwd?: string;
  /** Added to the environment; an undefined value removes a variable. */
  env?: Record<string, string | undefined>;
  /** the process is killed after this long (default 150 s, below the e2e test timeout), so a hang fails the test with its output */
  timeoutMs?: number;
}

/**
 * The program and arguments that start `bin/semsearch` with `args`. Node passes a string argument as
 * UTF-8, so arguments given as bytes (a Buffer: bytes that are not UTF-8, as a shell passes them) go
 * through sh, each written as printf's octal escapes (a Buffer's last line ends are dropped, as by
 * any command substitution).
 */
function command(args: (string | Buffer)[]): [string, string[]] {
  if (!args.some((arg) => Buffer.isBuffer(arg))) return [process.execPath, [BIN, ...(args as string[])]];
  const strings: string[] = [BIN];
  const words = args.map((arg) => {
    if (Buffer.isBuffer(arg)) return `"$(printf '${[...arg].map((byte) => `\\${byte.toString(8).padStart(3, "0")}`).join("")}')"`;
    strings.push(arg);
    return `"\${${strings.length}}"`;
  });
  return ["/bin/sh", ["-c", `exec "$0" "$1" ${words.join(" ")}`, process.execPath, ...strings]];
}

export function runCli(args: (string | Buffer)[], options: RunOptions = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const env = userEnv(options.env);
    if (!options.env || !("SEMSEARCH_PROJECT" in options.env)) delete env.SEMSEARCH_PROJECT;
    const [program, argv] = command(args);
    const child = spawn(program, argv, { cwd: options.cwd ?? ROOT, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => {
      stderr += `\n[runCli: killed after ${options.timeoutMs ?? 150_000} ms]`;
      child.kill("SIGKILL");
    }, options.timeoutMs ?? 150_000);
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ exitCode: code ?? -1, signal, stdout, stderr });
    });
    child.stdin.on("error", () => {}); // a command that exits without reading its input
    child.stdin.end(options.input ?? "");
  });
}

/** A fresh temporary project directory. */
export function tempProject(): string {
  return path.join(mkdtempSync(path.join(tmpdir(), "semsearch-e2e-")), "project");
}

/** Runs a command that must succeed with an empty stderr, and parses its JSON stdout. */
export async function cliJson<T = any>(project: string, args: string[], options: RunOptions = {}): Promise<T> {
  const result = await runCli(["--project", project, "--json", ...args], options);
  if (result.exitCode !== 0 || result.stderr !== "") {
    throw new Error(`semsearch ${args.join(" ")} exited ${result.exitCode}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  }
  return JSON.parse(result.stdout) as T;
}

/**
 * An empty working folder where a page's `sh` lines run as a reader runs them: through bash (with
 * pipefail), `semsearch` on the PATH as the package's bin, no SEMSEARCH_PROJECT. `run` never throws.
 */
export function docsShell(name: string): { work: string; run(command: string, extra?: Record<string, string>): SpawnSyncReturns<string> } {
  const home = mkdtempSync(path.join(tmpdir(), `semsearch-${name}-`));
  const work = path.join(home, "work");
  const bin = path.join(home, "bin");
  mkdirSync(work);
  mkdirSync(bin);
  symlinkSync(BIN, path.join(bin, "semsearch"));
  const env = { ...userEnv({ SEMSEARCH_PROJECT: undefined }), PATH: `${bin}${path.delimiter}${process.env.PATH}` } as NodeJS.ProcessEnv;
  return { work, run: (command, extra = {}) => spawnSync("bash", ["-o", "pipefail", "-c", command], { cwd: work, env: { ...env, ...extra }, encoding: "utf8", timeout: 170_000 }) };
}
