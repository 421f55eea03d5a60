/**
 * The one catalog of errors the engine raises. Every user-facing failure is a
 * SemsearchError with a stable `code`, the HTTP `status` the service would use
 * and the CLI `exitCode`; anything else is a bug and becomes an InternalError.
 */

export interface ErrorIssue {
  /** Where the problem is: a config path (`configuration.fields.types.price`), `file:line`, or a flag. */
  path: string;
  message: string;
  /** For a filter: the 1-based column of the filter text where the problem starts. */
  column?: number;
}

export interface SemsearchErrorOptions {
  hint?: string;
  issues?: ErrorIssue[];
  cause?: unknown;
}

/** The serialised form, used across process and thread boundaries and in `--json` output. */
export interface ErrorPayload {
  name: string;
  code: string;
  message: string;
  hint?: string;
  issues?: ErrorIssue[];
}

export class SemsearchError extends Error {
  readonly code: string;
  readonly status: number = 500;
  readonly exitCode: number = 1;
  readonly hint?: string;
  readonly issues?: ErrorIssue[];

  constructor(code: string, message: string, options: SemsearchErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.hint = options.hint;
    this.issues = options.issues;
  }

  toJSON(): ErrorPayload {
    const payload: ErrorPayload = { name: this.name, code: this.code, message: this.message };
    if (this.hint) payload.hint = this.hint;
    if (this.issues?.length) payload.issues = this.issues;
    return payload;
  }
}

/** Bad invocation: unknown flag, missing argument, conflicting options. */
export class UsageError extends SemsearchError {
  override readonly status = 400;
  override readonly exitCode = 2;
}

/** Something named does not exist: index, object, project; also an invalid index type (the service's 404). */
export class NotFoundError extends SemsearchError {
  override readonly status = 404;
  override readonly exitCode = 3;
}

/** Input is well-formed enough to read but wrong: the service's 422. */
export class ValidationError extends SemsearchError {
  override readonly status = 422;
  override readonly exitCode = 4;
}

/** The project is busy or in a state that forbids the operation. */
export class ConflictError extends SemsearchError {
  override readonly status = 409;
  override readonly exitCode = 5;
}

/** The user cancelled a prompt. */
export class CancelledError extends SemsearchError {
  override readonly status = 499;
  override readonly exitCode = 130;
}

/** A bug or an unclassified failure of a dependency. */
export class InternalError extends SemsearchError {
  override readonly status = 500;
  override readonly exitCode = 1;
}

const CLASSES = { UsageError, NotFoundError, ValidationError, ConflictError, CancelledError, InternalError };

/** Rebuilds an error sent as `toJSON()` from a worker thread or process. */
export function errorFromPayload(payload: ErrorPayload): SemsearchError {
  const Cls = CLASSES[payload.name as keyof typeof CLASSES] ?? InternalError;
  return new Cls(payload.code, payload.message, { hint: payload.hint, issues: payload.issues });
}

/** Wraps anything thrown by a dependency so callers only ever see SemsearchError. */
export function toSemsearchError(error: unknown, context: string): SemsearchError {
  if (error instanceof SemsearchError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new InternalError("INTERNAL", `${context}: ${message}`, { cause: error });
}
