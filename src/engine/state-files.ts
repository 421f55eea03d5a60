/**
 * The small JSON files of a project (catalog, progress, journals, worker state): written atomically
 * (a temporary file renamed into place, so readers see the old or the new content, never a mix),
 * read through a schema, so a damaged file is reported as such instead of failing later on a field
 * that is not there. Symbolic links are never followed when writing: a rename replaces the link.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import * as v from "valibot";
import { checkContent } from "./content-issues.js";
import { EnvironmentError, fsError } from "./errors.js";
import { notJsonReason } from "./json-error.js";

/** Why a state file could not be read: missing, or present but damaged (with the reason). */
export type StateRead<T> = { ok: true; value: T } | { ok: false; missing: boolean; reason: string };

/**
 * Reads and checks a JSON state file. Faults of the file system are thrown (EnvironmentError).
 * The reason for a damaged file says where it is wrong and what was expected, never what it holds
 * (json-error.ts, content-issues.ts): the file may be a link to another one, and errors reach logs
 * and HTTP clients.
 */
export function readState<T>(file: string, schema: v.GenericSchema<unknown, T>): StateRead<T> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { ok: false, missing: true, reason: "missing" };
    throw fsError(error, "read", file);
  }
  return parseState(text, schema);
}

/** Reads and checks a state record's text (a file's, or a record's in a bucket): as readState, without the reading. */
export function parseState<T>(text: string, schema: v.GenericSchema<unknown, T>): StateRead<T> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, missing: false, reason: notJsonReason(text) };
  }
  const result = checkContent(schema, value);
  // The value as parsed, not valibot's copy: records keep keys such as "__proto__" as JSON.parse made them (own data properties).
  if (result.ok) return { ok: true, value: value as T };
  const issue = result.issues[0] as (typeof result.issues)[number];
  return { ok: false, missing: false, reason: `${issue.path ? `${issue.path}: ` : ""}${issue.message}` };
}

/** The error for a state file that is damaged and cannot be derived again. */
export function damaged(file: string, reason: string, hint: string): EnvironmentError {
  // A bucket project's record is a folder of numbered versions (project-docs.ts): say how to mend one.
  const bucket = /^[a-z0-9]+:\/\//.test(file)
    ? ` In a bucket, ${file}/ is a folder of numbered versions whose newest is the value: removing the damaged newest version makes the one before it the value again; "remove" means removing every version.`
    : "";
  return new EnvironmentError("CORRUPT_PROJECT", `The project ${bucket ? "record" : "file"} ${file} is damaged: ${reason}`, { hint: hint + bucket });
}

/** Writes a JSON state file atomically; `mode` for files only their owner may read (API key digests). */
export function writeState(file: string, value: unknown, mode?: number): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, JSON.stringify(value, null, 2) + "\n", mode === undefined ? undefined : { mode });
    renameSync(tmp, file);
  } catch (error) {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // the file system refuses even that; the temporary file is named for this process only
    }
    throw fsError(error, "write", file);
  }
}

/** Removes a state file (absent is fine). */
export function removeState(file: string): void {
  try {
    rmSync(file, { force: true });
  } catch (error) {
    throw fsError(error, "remove", file);
  }
}
