/**
 * Checking a file's JSON content against a valibot schema with messages that say where it is wrong
 * and what was expected, never what it holds: the file may be a link to another one (a state file
 * linked to /etc/passwd) or anything in a model folder, and errors reach logs and HTTP clients.
 * valibot's own messages quote the value ("Expected number but received \"…\"", "Invalid safe
 * integer: Received 1.5"). Pure.
 */
import * as v from "valibot";

/** Where the content is wrong (a dot path such as `indexes.0.id`; "" for the whole value) and what was expected. */
export interface ContentIssue {
  path: string;
  message: string;
}

export type ContentCheck<T> = { ok: true; output: T } | { ok: false; issues: ContentIssue[] };

/** Words for the checks whose `expected` valibot leaves empty. */
const WANTED: Record<string, string> = { safe_integer: "a whole number", integer: "a whole number", finite: "a finite number", check: "a valid value" };

/**
 * A valibot message for a check without a message of its own (a schema's own message wins): what
 * was expected, never the value found.
 */
function expectedOnly(issue: v.BaseIssue<unknown>): string {
  return `expected ${WANTED[issue.type] ?? issue.expected ?? issue.type.replaceAll("_", " ")}`;
}

/** Checks a file's decoded JSON against `schema`; the issues name paths and expectations only. */
export function checkContent<T>(schema: v.GenericSchema<unknown, T>, value: unknown): ContentCheck<T> {
  const result = v.safeParse(schema, value, { message: expectedOnly });
  if (result.success) return { ok: true, output: result.output };
  return { ok: false, issues: result.issues.map((issue) => ({ path: v.getDotPath(issue) ?? "", message: issue.message })) };
}
