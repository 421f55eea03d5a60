/** Checking numeric parameters the same way everywhere (search, listing, the CLI's flags). Pure. */
import { ValidationError } from "./errors.js";

/** `value` if it is an integer from `min` to `max`; `fallback` when it is not given; ValidationError INVALID_PARAMETER otherwise. */
export function integerIn(name: string, value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const range = `an integer from ${min.toLocaleString("en-US")} to ${max.toLocaleString("en-US")}`;
    throw new ValidationError("INVALID_PARAMETER", `${name} must be ${range}, got ${value}`, {
      issues: [{ path: name, message: `must be ${range}` }],
    });
  }
  return value;
}
