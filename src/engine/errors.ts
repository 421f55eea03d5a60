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

/** A problem that does not fail an operation, for a person to act on (the CLI prints it on stderr). */
export interface Warning {
  /** INDEX_BUILDING, WORKER_NOT_STARTED, FIELD_NOT_FOUND, NO_SEARCHABLE_TEXT, COMPACTION_FAILED, HIGHLIGHTS_REORDERED, TEXT_NOT_NORMALIZED… */
  code: string;
  message: string;
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

/**
 * The machine will not do what the project needs: a full disk, a read-only file system, no
 * permission, a project path that is not a directory, damaged project files. Not a bug; the
 * message says what to do.
 */
export class EnvironmentError extends SemsearchError {
  override readonly status = 503;
  override readonly exitCode = 6;
}

/** A bug or an unclassified failure of a dependency. */
export class InternalError extends SemsearchError {
  override readonly status = 500;
  override readonly exitCode = 1;
}

/**
 * A request the HTTP server refuses before the engine sees it: a body too large (413), a method
 * the path does not have (405), a media type it does not read (415), a read-only key writing
 * (403), too many searches at once (503). Carries its own status; a usage error for the CLI.
 */
export class RequestRefusedError extends SemsearchError {
  override readonly status: number;
  override readonly exitCode = 2;
  /** Response headers that go with it (`Allow`, `Retry-After`). */
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, message: string, options: SemsearchErrorOptions & { headers?: Record<string, string> } = {}) {
    super(code, message, options);
    this.status = status;
    this.headers = options.headers ?? {};
  }
}

const CLASSES = { UsageError, NotFoundError, ValidationError, ConflictError, CancelledError, EnvironmentError, InternalError };

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

/** What each system error code means for a person, for the codes that are faults of the environment. */
const ENVIRONMENT_CODES: Record<string, { what: string; hint: string }> = {
  ENOSPC: { what: "the disk is full", hint: "Free some space on the disk, then run the command again." },
  EDQUOT: { what: "the disk quota is exceeded", hint: "Free some space within your quota, then run the command again." },
  EROFS: { what: "the file system is read-only", hint: "Use a project directory on a writable file system (--project)." },
  EACCES: { what: "permission denied", hint: "Check the permissions of the project directory, or use another one (--project)." },
  EPERM: { what: "operation not permitted", hint: "Check the permissions of the project directory, or use another one (--project)." },
  ENOTDIR: { what: "a part of the path is not a directory", hint: "--project (or SEMSEARCH_PROJECT) must name a directory, or a path where one can be created." },
  EISDIR: { what: "it is a directory", hint: "Remove or rename that directory." },
  ENAMETOOLONG: { what: "the path is too long", hint: "Use a shorter project path." },
  ELOOP: { what: "too many symbolic links", hint: "Check the symbolic links in the project path." },
  EIO: { what: "an input/output error", hint: "The disk or file system reported a fault; check it." },
  EMFILE: { what: "too many open files", hint: "Raise the open-file limit (ulimit -n)." },
  ENFILE: { what: "too many open files in the system", hint: "Close other programs or raise the system's open-file limit." },
  ENOMEM: { what: "out of memory", hint: "Close other programs, or add memory." },
};

/** The system error code of an error (`ENOSPC`, …), if it is a system error. */
export function systemErrorCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === "string" && /^E[A-Z]+$/.test(code) ? code : undefined;
}

/** Whether an error is one of the environment's faults (full disk, read-only, permissions…). */
export function isEnvironmentFault(error: unknown): boolean {
  const code = systemErrorCode(error);
  return code !== undefined && Object.hasOwn(ENVIRONMENT_CODES, code);
}

/**
 * A file-system failure as a SemsearchError: an EnvironmentError with a message saying what failed
 * and why (`Cannot write /p/catalog.json: the disk is full (ENOSPC)`) for the environment's faults,
 * an InternalError otherwise.
 */
export function fsError(error: unknown, action: string, file: string): SemsearchError {
  if (error instanceof SemsearchError) return error;
  return environmentError(error, `Cannot ${action} ${file}`) ?? new InternalError("INTERNAL", `Cannot ${action} ${file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
}

/** An EnvironmentError `<subject>: <what the code means> (<code>)` for an environment fault; null for any other error. */
export function environmentError(error: unknown, subject: string): EnvironmentError | null {
  const code = systemErrorCode(error);
  const known = code !== undefined && Object.hasOwn(ENVIRONMENT_CODES, code) ? ENVIRONMENT_CODES[code] : undefined;
  return known ? new EnvironmentError(code as string, `${subject}: ${known.what} (${code})`, { hint: known.hint, cause: error }) : null;
}
