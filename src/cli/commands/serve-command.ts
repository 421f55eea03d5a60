/** `semsearch serve`: the service's HTTP API over this project, until SIGTERM or SIGINT. */
import path from "node:path";
import { Engine, integerIn, InternalError, localSocketPath, realProjectPath, SemsearchError, UsageError, type Warning } from "../../engine/index.js";
import type { Readiness } from "../../server/routes.js";
import { projectDir, type GlobalOptions } from "../options.js";
import { pkg } from "../package-info.js";
import { formatLogLine, logFormat } from "../log-line.js";

/** How old a server's view of a bucket project's state may be (a change made on another machine reaches it within this). */
const STATE_MAX_AGE_MS = 1_000;

export interface ServeCommandOptions extends GlobalOptions {
  host?: string;
  port?: number;
  /** false with --no-auth */
  auth?: boolean;
  maxBodyMb?: number;
  maxSearches?: number;
  maxQueuedSearches?: number;
  imageRoot?: string;
  /** false with --no-access-log */
  accessLog?: boolean;
  shutdownTimeout?: number;
  corsOrigin?: string[];
  /** false with --no-local-socket */
  localSocket?: boolean;
  /** false with --no-worker */
  worker?: boolean;
  /** false with --no-ui */
  ui?: boolean;
  /** json or human (default: human at a terminal) */
  logFormat?: string;
}

export async function serveCommand(options: ServeCommandOptions): Promise<void> {
  // One log line on stderr: JSON for a collector, a short line at a terminal (log-line.ts).
  const format = logFormat(options.logFormat, process.stderr.isTTY === true);
  const log = (entry: Record<string, unknown>) => process.stderr.write(formatLogLine(entry, format));
  const host = options.host ?? "127.0.0.1";
  const port = integerIn("--port", options.port, 8080, 0, 65535);
  const maxBodyMb = integerIn("--max-body-mb", options.maxBodyMb, 64, 1, 4096);
  const { isLoopback, startServer } = await import("../../server/serve.js");
  const auth = options.auth !== false;
  if (!auth && !isLoopback(host)) {
    throw new UsageError("AUTH_REQUIRED", `--no-auth serves without keys, so only on a loopback address (127.0.0.1, ::1, localhost), not on ${host}`, { hint: "Create a key with `semsearch keys create` and leave out --no-auth." });
  }
  // The project's real path: the socket is named after it, so a symbolic link retargeted later does not switch the server's data.
  // (a bucket project's state is read at most once a second, not at each search: docs/deploy.md)
  const engine = new Engine({ projectDir: realProjectPath(projectDir(options)), ...(options.worker === false ? { noWorker: true } : {}), stateMaxAgeMs: STATE_MAX_AGE_MS, onWarning: (warning: Warning) => log({ level: "warning", ...warning }) });
  const checker = await engine.keyChecker();
  if (auth && !checker.hasKeys()) {
    throw new UsageError("NO_KEYS", "The project has no API keys, and serve needs one to check requests against", {
      hint: "Create one with `semsearch keys create` (add --read-only for search only), or, on a loopback address, serve without keys with --no-auth.",
    });
  }
  // Ready (GET /readyz) once the models are loaded and the indexes opened and prewarmed, below.
  let readiness: Readiness = { ready: false };
  const server = await startServer(engine, {
    readiness: () => readiness,
    host,
    port,
    checkKey: auth ? (key) => checker.check(key) : null,
    maxBodyBytes: maxBodyMb * 1024 * 1024,
    maxSearches: integerIn("--max-searches", options.maxSearches, 8, 1, 1024),
    maxQueuedSearches: integerIn("--max-queued-searches", options.maxQueuedSearches, 256, 0, 100_000),
    corsOrigins: options.corsOrigin,
    ui: options.ui !== false,
    imageRoot: options.imageRoot === undefined ? undefined : path.resolve(options.imageRoot),
    shutdownTimeoutMs: integerIn("--shutdown-timeout", options.shutdownTimeout, 30, 0, 3600) * 1000,
    version: pkg.version,
    localSocket: options.localSocket === false ? undefined : localSocketPath(engine.projectDir),
    onRequest: options.accessLog === false ? undefined : (entry) => log({ level: "info", ...entry }),
    onServerError: (error, cause) => log({ level: "error", code: error.code, message: error.message, stack: cause instanceof Error ? cause.stack : undefined }),
  });
  // The address on stdout (data: `semsearch serve --port 0 > url`); everything else is a log line on stderr.
  process.stdout.write(`${server.url}\n`);
  log({ level: "info", event: "listening", url: server.url, project: engine.projectDir, auth: auth ? "keys" : "none" });
  if (options.ui !== false) log({ level: "info", event: "search page", url: `${server.url}/` });
  if (auth) {
    // (a request without a valid key gets a bare 404 by design: say so where the person starting it reads)
    log({ level: "info", event: "keys", message: "Requests need an API key in `Authorization: Bearer <key>` (without a valid one they get 404); make one with `semsearch keys create`." });
  }
  if (server.local && "socketPath" in server.local) log({ level: "info", event: "answering local searches", socket: server.local.socketPath });
  else if (server.local) log({ level: "warning", event: "not answering local searches", reason: server.local.reason });
  // The models load now rather than in the first search (which would wait about half a second for them).
  const warming = performance.now();
  void engine.warmUp().then(
    () => {
      readiness = { ready: true };
      log({ level: "info", event: "warm", ms: Math.round(performance.now() - warming) });
    },
    (error: unknown) => {
      // Not ready: /readyz answers 503 with why (a damaged project, say), and searches fail the same way.
      readiness = { ready: false, error: error instanceof SemsearchError ? error : new InternalError("WARM_UP_FAILED", "it could not load the project's models and indexes (see its log)") };
      log({ level: "warning", event: "not warmed up", message: error instanceof Error ? error.message : String(error) });
    },
  );
  await new Promise<void>((resolve) => {
    // A second signal, of either kind, ends the process at once; an add it cuts off is rolled back by the next writer.
    const force = (signal: NodeJS.Signals) => {
      log({ level: "warning", event: "stopped at once", signal, in_flight: server.inFlight() });
      process.exit(signal === "SIGINT" ? 130 : 143);
    };
    const onSignal = (signal: NodeJS.Signals) => {
      for (const name of ["SIGTERM", "SIGINT"] as const) {
        process.removeListener(name, onSignal);
        process.once(name, force);
      }
      log({ level: "info", event: "stopping", signal, in_flight: server.inFlight() });
      void server.stop().then((finished) => {
        log({ level: "info", event: "stopped", finished });
        resolve();
      });
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  });
}
