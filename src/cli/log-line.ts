import { UsageError } from "../engine/index.js";

/**
 * A server's log lines on stderr: one JSON object per line for log collectors (the default when
 * stderr is not a terminal), or a short line for a person at a terminal. Pure.
 */

export type LogFormat = "json" | "human";

/** The entry's fields that lead a human line, in this order; the rest follow as `name=value`. */
const LEADING = ["event", "method", "path", "status"] as const;

function humanValue(value: unknown): string {
  if (typeof value === "string") return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

/**
 * One log line (with its newline). `time` is the moment it is written; a human line shows it as
 * HH:MM:SS (local time), then the level (when not `info`), what happened, and the other fields.
 */
export function formatLogLine(entry: Record<string, unknown>, format: LogFormat, time = new Date()): string {
  if (format === "json") return `${JSON.stringify({ time: time.toISOString(), ...entry })}\n`;
  const clock = [time.getHours(), time.getMinutes(), time.getSeconds()].map((part) => String(part).padStart(2, "0")).join(":");
  const parts: string[] = [clock];
  if (entry.level !== undefined && entry.level !== "info") parts.push(String(entry.level));
  for (const name of LEADING) if (entry[name] !== undefined) parts.push(String(entry[name]));
  if (typeof entry.ms === "number" && entry.method !== undefined) parts.push(`${entry.ms} ms`);
  if (typeof entry.message === "string") parts.push(entry.message);
  for (const [name, value] of Object.entries(entry)) {
    if (value === undefined || name === "level" || name === "message" || name === "stack" || (LEADING as readonly string[]).includes(name)) continue;
    if (name === "ms" && entry.method !== undefined) continue;
    parts.push(`${name}=${humanValue(value)}`);
  }
  const stack = typeof entry.stack === "string" ? `\n${entry.stack}` : "";
  return `${parts.join(" ")}${stack}\n`;
}

/** The format asked for (`--log-format`), else human at a terminal and JSON elsewhere. */
export function logFormat(asked: string | undefined, terminal: boolean): LogFormat {
  if (asked === undefined) return terminal ? "human" : "json";
  if (asked === "json" || asked === "human") return asked;
  throw new UsageError("INVALID_LOG_FORMAT", `--log-format is json or human, not ${JSON.stringify(asked.slice(0, 40))}`);
}
