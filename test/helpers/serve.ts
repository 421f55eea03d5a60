/** Starts the built `semsearch serve` as a subprocess on an ephemeral loopback port. */
import { spawn, type ChildProcess } from "node:child_process";
import { BIN, ROOT, userEnv } from "./cli.js";

export interface Served {
  url: string;
  child: ChildProcess;
  /** Everything the server wrote on stderr so far. */
  stderr(): string;
  /** Sends a signal and resolves with the exit code (-1 for a signal) once it exits. */
  stop(signal?: NodeJS.Signals): Promise<number>;
  exited: Promise<number>;
}

/** `semsearch --project <project> serve --port 0 <args>`; resolves once it prints its URL, rejects if it exits first. */
export function serve(project: string, args: string[] = [], env: Record<string, string | undefined> = {}): Promise<Served> {
  const child = spawn(process.execPath, [BIN, "--project", project, "serve", "--port", "0", ...args], {
    cwd: ROOT,
    env: userEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<number>((resolve) => child.on("close", (code) => resolve(code ?? -1)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start in 30 s\n${stderr}`)), 30_000);
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      const line = /^(http:\/\/\S+)\n/.exec(stdout);
      if (!line) return;
      clearTimeout(timer);
      resolve({
        url: line[1] as string,
        child,
        stderr: () => stderr,
        exited,
        stop: (signal = "SIGTERM") => {
          child.kill(signal);
          return exited;
        },
      });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited ${code} before listening\n${stderr}`));
    });
  });
}

/** A fetch with a key (or none) that returns status, headers, the body text and its JSON. */
export async function call(url: string, key: string | null, init: RequestInit = {}): Promise<{ status: number; headers: Headers; text: string; json: any }> {
  const headers = new Headers(init.headers);
  if (key !== null) headers.set("authorization", `Bearer ${key}`);
  const response = await fetch(url, { ...init, headers });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}
