/** The CLI entry and its only error boundary: messages to stderr, exit codes from the error catalog. */
import { CommanderError, type Command } from "commander";
import { beforeEarlyExit, environmentError, errorBody, InternalError, SemsearchError, UsageError } from "../engine/index.js";
import { pkg } from "./package-info.js";
import { createProgram } from "./program.js";
import { configureColor, chalk, printable } from "./render/style.js";


/**
 * A reader that stops reading (`semsearch search … --jsonl | head -1`) closes the pipe: that ends the
 * command quietly, with success, as in ripgrep and jq. A closed stderr is ignored.
 */
function endQuietlyOnClosedPipe(): void {
  let ending = false;
  /** Exits once the command's embedding threads are stopped (stopped inside onnxruntime, the process would abort). */
  const exit = (code: number) => {
    ending = true;
    void beforeEarlyExit().finally(() => process.exit(code));
  };
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (ending) return;
    if (error.code === "EPIPE") return exit(0);
    // Output that cannot be written (a full disk behind a redirection, say) is the environment's fault.
    const fault = classify(Object.assign(error, { path: "standard output" }));
    report(fault, wantsJson(process.argv));
    exit(fault.exitCode);
  });
  process.stderr.on("error", () => {});
}

/** A failure that is not a SemsearchError: the environment's fault (exit 6) when its system error code says so, else a bug. */
function classify(caught: unknown): SemsearchError {
  const where = caught as { syscall?: unknown; path?: unknown };
  const subject = typeof where.path === "string" ? `Cannot ${typeof where.syscall === "string" ? where.syscall : "use"} ${where.path}` : "The command failed";
  return environmentError(caught, subject) ?? new InternalError("INTERNAL", caught instanceof Error ? caught.message : String(caught), { cause: caught });
}

function wantsJson(argv: string[]): boolean {
  const format = argv.findIndex((arg) => arg === "--format");
  const asked = format >= 0 ? argv[format + 1] : argv.find((arg) => arg.startsWith("--format="))?.slice("--format=".length);
  return argv.includes("--json") || argv.includes("--jsonl") || asked === "json" || asked === "jsonl";
}

function fromCommander(error: CommanderError): SemsearchError | null {
  if (["commander.helpDisplayed", "commander.version", "commander.help"].includes(error.code)) return null;
  const message = error.message.replace(/^error: /, "");
  return new UsageError("USAGE", message.charAt(0).toUpperCase() + message.slice(1), { hint: "Run with --help for usage." });
}

function report(error: SemsearchError, json: boolean): void {
  if (json) {
    process.stderr.write(JSON.stringify(errorBody(error)) + "\n");
    return;
  }
  process.stderr.write(`${chalk.red("error:")} ${printable(error.message)}\n`);
  for (const issue of error.issues?.slice(1) ?? []) process.stderr.write(`  ${printable(issue.path)}: ${printable(issue.message)}\n`);
  if (error.hint) process.stderr.write(`${chalk.dim(printable(error.hint))}\n`);
  if (error instanceof InternalError) {
    const cause = error.cause instanceof Error ? error.cause : error;
    const where = pkg.bugs?.url ? ` at ${pkg.bugs.url}` : "";
    process.stderr.write(`${cause.stack ?? ""}\nThis is a bug in semsearch ${pkg.version}; please report it${where} with the lines above.\n`);
  }
}

export async function main(argv: string[]): Promise<number> {
  const json = wantsJson(argv);
  configureColor(!argv.includes("--no-color"));
  const program = createProgram(undefined, pkg.version);
  // commander's own error lines are reported by `report`; the help it prints after a usage error is kept.
  const output = { writeErr: (text: string) => void (!json && !text.startsWith("error:") && process.stderr.write(text)) };
  const all = (command: Command): Command[] => [command, ...command.commands.flatMap(all)];
  for (const command of all(program)) command.configureOutput(output);
  try {
    await program.parseAsync(argv, { from: "user" });
    // A command may finish its output and still report a partial failure (`--wait` with failed objects: 7).
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (caught) {
    let error: SemsearchError | null;
    if (caught instanceof CommanderError) error = fromCommander(caught);
    else if (caught instanceof SemsearchError) error = caught;
    else error = classify(caught);
    // Help shown because a command is missing (`semsearch`, `semsearch index`) is a usage error.
    if (error === null) return caught instanceof CommanderError && caught.code === "commander.help" ? 2 : 0;
    report(error, json);
    return error.exitCode;
  }
}

endQuietlyOnClosedPipe();
process.exitCode = await main(process.argv.slice(2));
