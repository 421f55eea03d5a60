/** Writing results to stdout: one JSON document with --json, text for people otherwise. */
import { formatJson } from "./render/json.js";
import type { GlobalOptions } from "./options.js";

export function printResult(options: GlobalOptions, json: unknown, human: () => string): void {
  process.stdout.write(options.json ? formatJson(json, process.stdout.isTTY === true) : human());
}

/** A line of information for people, on stderr (never with --json). */
export function note(options: GlobalOptions, message: string): void {
  if (!options.json) process.stderr.write(message + "\n");
}
