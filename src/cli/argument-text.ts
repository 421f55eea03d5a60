/**
 * Every argument and flag value of a command, checked before it runs for text a command line cannot
 * carry exactly: Node reads argv's bytes as UTF-8 and puts U+FFFD where they are not, keeping no
 * trace of them, so `objects delete $'keep\xff'` would name (and delete) the object `keep\uFFFD`.
 * The rule is the engine's (engine/replaced-text.ts); `--project` has its own (engine/location.ts,
 * exit 2), checked when the project is opened.
 */
import type { Command } from "commander";
import { refuseReplacedText } from "../engine/index.js";

const HINT =
  "Give arguments as UTF-8. To mean U+FFFD itself, give the value where its bytes are read: ids on standard input (objects delete -), a query or a filter in a file (--query-file, --filter-file), or over HTTP (semsearch serve).";

/** The texts of a parsed value: a string, a list of them, or a record of `key=value` flags (keys and values). */
function texts(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(texts);
  if (value !== null && typeof value === "object") return Object.entries(value).flatMap(([key, inner]) => [key, ...texts(inner)]);
  return [];
}

/** A command as it is typed: `objects delete`, `semsearch` for the root. */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at?.parent; at = at.parent) names.unshift(at.name());
  return names.join(" ") || "semsearch";
}

/** Refuses (ValidationError ARGUMENT_NOT_UTF8, exit 4) the first argument or flag value of `command` (and its parents' flags) holding U+FFFD or half a character. */
export function checkArgumentText(command: Command): void {
  const path = commandPath(command);
  command.registeredArguments.forEach((argument, i) => {
    for (const text of texts(command.processedArgs[i])) refuseReplacedText(text, `${path} <${argument.name()}>`, HINT);
  });
  for (let at: Command | null = command; at; at = at.parent) {
    for (const option of at.options) {
      const name = option.attributeName();
      if (name === "project") continue;
      for (const text of texts(at.getOptionValue(name))) refuseReplacedText(text, `${path} ${option.long ?? option.flags}`, HINT);
    }
  }
}
