/** Shared flags and argument parsers of the CLI. */
import { isUtf8 } from "node:buffer";
import path from "node:path";
import { constants } from "node:fs";
import { createReadStream, fstatSync, statSync } from "node:fs";
import { access, stat } from "node:fs/promises";
import { InvalidArgumentError, type Command } from "commander";
import { warn } from "./output.js";
import { Engine, UsageError, DEFAULT_PROJECT_DIR, findProjectDir, isBucketAddress, namedProjectDir, projectAddress, formatByteLimit, refuseProjectData, type ObjectsInput } from "../engine/index.js";

/** Options every command inherits from the root program. */
export interface GlobalOptions {
  project?: string;
  json?: boolean;
  /** --format: table, tsv, json (as --json) or jsonl (search, as --jsonl) */
  format?: string;
  /** search's --jsonl: like --json, it makes warnings and errors JSON lines on stderr */
  jsonl?: boolean;
  color?: boolean;
  /** --in-process: not through a running server (cli/reader.ts) */
  inProcess?: boolean;
}

export function globals(command: Command): GlobalOptions {
  return command.optsWithGlobals() as GlobalOptions;
}

/**
 * Project directory: --project, else SEMSEARCH_PROJECT, else the nearest `.semsearch` in the working
 * directory or above it, else ./.semsearch (created by the first command that writes).
 * An empty --project or SEMSEARCH_PROJECT is refused rather than read as the working directory.
 */
export function projectDir(options: GlobalOptions): string {
  const given = options.project ?? process.env.SEMSEARCH_PROJECT;
  if (given !== undefined) {
    if (given.trim() === "") {
      const what = options.project !== undefined ? "--project" : "SEMSEARCH_PROJECT";
      throw new UsageError("EMPTY_PROJECT", `${what} is empty`, { hint: `Name a project directory, or leave ${what} out to use the nearest .semsearch.` });
    }
    const address = projectAddress(given);
    return isBucketAddress(address) ? address : namedProjectDir(address);
  }
  return findProjectDir(process.cwd()) ?? DEFAULT_PROJECT_DIR;
}

export function openEngine(options: GlobalOptions, dir = projectDir(options)): Engine {
  // A command answers and exits: a search's model loads in a thread beside the database's opening.
  return new Engine({ projectDir: dir, onWarning: (warning) => warn(options, warning), oneShot: true });
}

/**
 * commander argParser for an integer flag. Text that is not a whole number is a usage error (exit 2);
 * whether the number is in range is the engine's check, a validation error (exit 4), as the
 * service's 422 for the same parameter.
 */
export function integerArg(value: string): number {
  if (!/^[+-]?\d+$/.test(value.trim())) throw new InvalidArgumentError(`expected a whole number, got "${value}"`);
  return Number(value);
}

/**
 * commander argParser for a number flag: text that is not a number is a usage error (exit 2); its
 * range is the engine's check (exit 4). The HTTP API takes the same text (server/schemas.ts DECIMAL).
 * (The pattern has one way to match digits: `\d+\.?\d*` took 1.4 s to refuse 30,000 digits and an x.)
 */
export function numberArg(value: string): number {
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(value.trim())) throw new InvalidArgumentError(`expected a number, got "${value}"`);
  return Number(value);
}

/** Multipliers of the units `sizeArg` reads (binary: 1KB is 1,024 bytes, as the limits are documented). */
const SIZE_UNITS: Record<string, number> = { "": 1, B: 1, KB: 1024, K: 1024, KIB: 1024, MB: 1024 ** 2, M: 1024 ** 2, MIB: 1024 ** 2, GB: 1024 ** 3, G: 1024 ** 3, GIB: 1024 ** 3 };

/** commander argParser for a size in bytes: `500000`, `500KB`, `10MB`, `1.5GB` (units of 1,024). */
export function sizeArg(value: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(value.trim());
  const unit = match ? SIZE_UNITS[(match[2] as string).toUpperCase()] : undefined;
  if (!match || unit === undefined) throw new InvalidArgumentError(`expected a size such as 500KB or 10MB, got "${value}"`);
  const bytes = Math.floor(Number(match[1]) * unit);
  if (bytes < 1 || !Number.isSafeInteger(bytes)) throw new InvalidArgumentError(`expected a size of at least 1 byte, got "${value}"`);
  return bytes;
}

/** commander argParser for a comma-separated list. */
export function listArg(value: string): string[] {
  return value
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "");
}

/** commander argParser for a repeatable `key=value` flag. */
export function keyValueArg(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf("=");
  if (at <= 0) throw new InvalidArgumentError(`expected field=value, got "${value}"`);
  // Any text is a field name: a computed key and a spread define own keys, so `__proto__=x` or
  // `constructor=x` is an entry like any other (a plain `out[key] = …` would set the prototype).
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

function refuseTerminalStdin(): void {
  if (process.stdin.isTTY) throw new UsageError("NO_INPUT", "Reading from standard input, but it is a terminal: pipe the input in");
}

function unreadable(file: string, error: unknown): UsageError {
  const code = (error as NodeJS.ErrnoException).code;
  const reason = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (error as Error).message;
  return new UsageError("INPUT_NOT_READABLE", `Cannot read ${file}: ${reason}`);
}

/** Whether `file` is this process's standard input: `-`, or a path to the same file (`/dev/stdin`, `/proc/self/fd/0`, the FIFO it reads). */
export function isStandardInput(file: string): boolean {
  if (file === "-") return true;
  try {
    const [named, input] = [statSync(file), fstatSync(0)];
    return named.dev === input.dev && named.ino === input.ino;
  } catch {
    return false;
  }
}

/**
 * The text of a file, or of standard input for `-` (or another name of it, which is refused on a
 * terminal as `-` is): at most `maxBytes` (more is a usage error naming `label`), UTF-8 (malformed
 * bytes are refused, as objects add refuses them, rather than read as U+FFFD: a filter value would
 * match nothing, and say nothing).
 */
export async function readInput(file: string, label: string, maxBytes: number): Promise<{ text: string; source: string }> {
  const stdin = isStandardInput(file);
  const source = file === "-" ? "<stdin>" : file;
  if (stdin) refuseTerminalStdin();
  const stream = file === "-" ? process.stdin : createReadStream(file);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) throw new UsageError("INPUT_TOO_LARGE", `${label} ${source}: more than ${formatByteLimit(maxBytes)}`);
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw unreadable(file, error);
  } finally {
    if (file !== "-") (stream as ReturnType<typeof createReadStream>).destroy();
  }
  const bytes = Buffer.concat(chunks);
  if (!isUtf8(bytes)) throw new UsageError("INPUT_NOT_UTF8", `${label} ${source}: not UTF-8 text (convert it to UTF-8, e.g. with iconv)`);
  return { text: bytes.toString("utf8"), source };
}

/** An argument given as a file (`--query-file`, `--filter-file`), without its last line end, as a shell's `$(cat file)` would give it. */
export async function readArgumentFile(file: string, option: string, maxBytes: number): Promise<string> {
  return (await readInput(file, option, maxBytes)).text.replace(/\r?\n$/, "");
}

/**
 * An input of `objects add`, streamed by the engine: a readable file by path, or standard input for `-`.
 * A missing or unreadable file is a usage error naming it.
 */
export async function objectsInput(file: string): Promise<ObjectsInput> {
  if (file === "-") {
    refuseTerminalStdin();
    return { stream: process.stdin, source: "<stdin>" };
  }
  let regular: boolean;
  try {
    const info = await stat(file);
    if (info.isDirectory()) throw new Error("it is a directory");
    await access(file, constants.R_OK);
    regular = info.isFile();
  } catch (error) {
    throw unreadable(file, error);
  }
  await refuseProjectData(file); // (a project's catalog.json or keys.json is its data, not objects)
  // A pipe, a FIFO or /dev/stdin can be read once only: it is streamed (and spooled), like standard input.
  const base = path.dirname(path.resolve(file));
  return regular ? { path: file, source: file, base } : { stream: createReadStream(file), source: file, base };
}

/** Runs `fn` with an engine on the selected project, closing it afterwards. */
export async function withEngine<T>(options: GlobalOptions, fn: (engine: Engine) => Promise<T>): Promise<T> {
  const engine = openEngine(options);
  try {
    return await fn(engine);
  } finally {
    await engine.close();
  }
}
