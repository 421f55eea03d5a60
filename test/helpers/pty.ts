/**
 * Drives the built CLI in a real pseudo-terminal: `script` (util-linux) runs it on a pty, we type
 * into the pty and read what the terminal would show (escape sequences stripped for assertions).
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { stripVTControlCharacters } from "node:util";
import { BIN, userEnv } from "./cli.js";

export const KEY = { enter: "\r", down: "\x1b[B", up: "\x1b[A", escape: "\x1b", ctrlC: "\x03" };

function shellQuote(arg: string): string {
  return `'${arg.replaceAll("'", "'\\''")}'`;
}

export class Terminal {
  private readonly child: ChildProcessWithoutNullStreams;
  private raw = "";
  private mark = 0;
  readonly exited: Promise<number>;

  constructor(args: string[], size = { cols: 120, rows: 40 }, extraEnv: Record<string, string> = {}) {
    const command = `stty cols ${size.cols} rows ${size.rows}; exec ${shellQuote(process.execPath)} ${shellQuote(BIN)} ${args.map(shellQuote).join(" ")}`;
    const env = userEnv({ TERM: "xterm-256color", FORCE_COLOR: undefined, NO_COLOR: undefined, ...extraEnv });
    delete env.SEMSEARCH_PROJECT;
    this.child = spawn("script", ["-qfec", command, "/dev/null"], { env, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout.on("data", (chunk) => (this.raw += chunk));
    this.child.stderr.on("data", (chunk) => (this.raw += chunk));
    this.exited = new Promise((resolve) => this.child.on("close", (code) => resolve(code ?? -1)));
  }

  /** Everything written so far, escape sequences included (to check what is greyed out, say). */
  get rawScreen(): string {
    return this.raw.replaceAll("\r\n", "\n");
  }

  /** Everything shown so far, as text. */
  get screen(): string {
    return stripVTControlCharacters(this.raw).replaceAll("\r\n", "\n");
  }

  /** Waits until `pattern` appears in what was shown since the last key sent; returns that text. */
  async waitFor(pattern: RegExp, timeoutMs = 30_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const recent = stripVTControlCharacters(this.raw.slice(this.mark)).replaceAll("\r\n", "\n");
      if (pattern.test(recent)) return recent;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; the screen ends with:\n${this.screen.slice(-1500)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Types keys, one at a time with a short pause (as a person would). */
  async type(...keys: string[]): Promise<void> {
    this.mark = this.raw.length;
    for (const key of keys) {
      this.child.stdin.write(key);
      await new Promise((resolve) => setTimeout(resolve, 80));
    }
  }

  kill(): void {
    this.child.kill("SIGKILL");
  }
}
