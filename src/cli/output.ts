/** Writing results to stdout: one JSON document with --json, text for people otherwise. */
import type { Warning } from "../engine/index.js";
import { formatJson } from "./render/json.js";
import { chalk, printable } from "./render/style.js";
import type { GlobalOptions } from "./options.js";
import type { ListFormat } from "./render/table.js";

export function printResult(options: GlobalOptions, json: unknown, human: () => string): void {
  process.stdout.write(options.json ? formatJson(json, process.stdout.isTTY === true) : human());
}

/** Whether output is for programs (--json, or search's --jsonl): then stderr carries JSON lines only. */
export function forPrograms(options: GlobalOptions): boolean {
  return options.json === true || options.jsonl === true;
}

/**
 * A warning on stderr: `warning: …` for people; with --json (or --jsonl) one line
 * `{"warnings":[{"code","message"}]}`, so stderr stays machine-readable. Shown whether or not stderr
 * is a terminal: it asks for action.
 */
export function warn(options: GlobalOptions, warning: Warning): void {
  if (forPrograms(options)) process.stderr.write(`${JSON.stringify({ warnings: [warning] })}\n`);
  else process.stderr.write(`${chalk.yellow("warning:")} ${printable(warning.message)}\n`);
}

/** A line of information for people, on stderr (never with --json or --jsonl). */
export function note(options: GlobalOptions, message: string): void {
  if (!forPrograms(options)) process.stderr.write(message + "\n");
}

/** How a list prints for people: `--format table|tsv`, else a table at a terminal and tab-separated values in a pipe. */
export function listFormat(options: GlobalOptions): ListFormat {
  if (options.format === "table" || options.format === "tsv") return options.format;
  return process.stdout.isTTY === true ? "table" : "tsv";
}
