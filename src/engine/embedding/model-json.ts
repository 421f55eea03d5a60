/**
 * Reading a model folder's JSON files (config.json, tokenizer.json, tokenizer_config.json,
 * preprocessor_config.json…) with errors that name the file and the place, never its content: a
 * model folder may be anything on disk, and errors reach HTTP clients and logs. JavaScript's own
 * JSON.parse message quotes the text around the fault, so it is never passed on.
 */
import { readFileSync } from "node:fs";
import { EnvironmentError } from "../errors.js";
import { notJsonReason } from "../json-error.js";
import { modelFileStat, modelsFsError } from "./model-cache.js";

/** Model config files are small; a larger one is refused rather than read (tokenizer.json is not read here). */
const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

const REPAIR_HINT = "Download the model again, or fix the folder.";

/** A file that is not JSON, named with the line and column (UTF-16 code units, from 1) of its first fault. */
export function notJsonError(file: string, text: string): EnvironmentError {
  return new EnvironmentError("MODEL_UNREADABLE", `The model file ${file} is ${notJsonReason(text)}`, { hint: REPAIR_HINT });
}

/**
 * A model config file's JSON object: undefined when the file is absent or holds another JSON value;
 * MODEL_UNREADABLE when it is larger than MAX_CONFIG_BYTES or not JSON.
 */
export function readModelJson(file: string): Record<string, unknown> | undefined {
  const stat = modelFileStat(file);
  if (!stat) return undefined;
  if (stat.size > MAX_CONFIG_BYTES) {
    throw new EnvironmentError("MODEL_UNREADABLE", `The model file ${file} is larger than ${MAX_CONFIG_BYTES / 1024 / 1024} MB: not a config file`, { hint: REPAIR_HINT });
  }
  const text = readText(file);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw notJsonError(file, text);
  }
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** Larger files are not looked into for a fault (a string of them may not fit in memory). */
const MAX_DIAGNOSED_BYTES = 256 * 1024 * 1024;

/** The first of `files` that is there but not JSON, as its error; null when every one parses (or is absent, or too large to look into). */
export function firstNotJson(files: readonly string[]): EnvironmentError | null {
  for (const file of files) {
    const stat = modelFileStat(file);
    if (!stat || stat.size > MAX_DIAGNOSED_BYTES) continue;
    const text = readText(file);
    try {
      JSON.parse(text);
    } catch {
      return notJsonError(file, text);
    }
  }
  return null;
}

function readText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw modelsFsError(error, "read", file);
  }
}
