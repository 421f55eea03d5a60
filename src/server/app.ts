/**
 * The HTTP API as a Hono app over one Engine: the spec's routes and the operations it leaves "not
 * shown", in its style. Requests are answered with exactly the JSON the CLI's `--json` prints (one
 * compact document and a newline); every error is `{"errors":[{"code","message"}]}`.
 *
 * Order of checks for every request: the path (unknown: 404), the key (missing, invalid or revoked:
 * the same 404, so a caller without a key learns nothing), the method (405 with Allow), the key's
 * scope (a read-only key writing: 403), then the query parameters and body (422, 413, 415).
 */
import { Hono, type Context } from "hono";
import { cors } from "hono/cors";
import * as v from "valibot";
import { errorBody, InternalError, NotFoundError, RequestRefusedError, SemsearchError, ValidationError, environmentError, type Caller, type Engine } from "../engine/index.js";
import { bodyCompleteness } from "./body.js";
import { Gate } from "./gate.js";
import { BodySpool } from "./spool.js";
import { isLoopbackHostHeader } from "./hosts.js";
import { DEFAULT_MAX_BODY_BYTES, ROUTES, type Route, type RouteOptions } from "./routes.js";
import { openApiDocument } from "./openapi.js";
import { loadUiAssets, uiResponse } from "./ui.js";

export interface AppOptions extends RouteOptions {
  /** Checks a key; null: no authentication (`serve --no-auth`, loopback only). */
  checkKey: ((key: string) => Caller | null) | null;
  /** Searches running at once (default 8); more wait in a queue of `maxQueuedSearches` (default 256), beyond which 503. */
  maxSearches?: number;
  maxQueuedSearches?: number;
  /** Called once per request, after the response: for access logs. */
  onRequest?: (entry: AccessEntry) => void;
  /** Called with failures the client is not told the details of (bugs, keys that cannot be checked), for the server's log. */
  onServerError?: (error: SemsearchError, cause: unknown) => void;
  /** Web page origins allowed to call the API from a browser (CORS), e.g. `https://app.example`; none by default. */
  corsOrigins?: string[];
  /** semsearch's version, for the OpenAPI document. */
  version?: string;
  /** The cap on searches at once, when shared with another way in (the local channel); else the app makes one. */
  searchGate?: Gate;
  /**
   * Bytes of objects bodies held at once, received or being received, waiting for their add (default
   * 1 GiB, and at least two bodies of `maxBodyBytes`); beyond, 503 BUSY.
   */
  maxHeldBodyBytes?: number;
  /** Where bodies are received (serve.ts makes one and removes its files at stop); else the app makes one. */
  bodySpool?: BodySpool;
  /** Serve the search page at `/` (ui.ts; `serve --no-ui` turns it off). */
  ui?: boolean;
  /** Where the built page is (default: dist/ui, ui.ts's UI_DIR). */
  uiDir?: string;
}

export interface AccessEntry {
  method: string;
  /** The path, and the names of the query parameters without their values. */
  path: string;
  status: number;
  ms: number;
  /** Id of the key used (never the key). */
  key?: string;
}

const JSON_TYPE = "application/json; charset=utf-8";

/** The response for a value: one compact JSON document and a newline, as `semsearch --json` prints in a pipe. */
export function jsonResponse(value: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(value) + "\n", { status, headers: { "content-type": JSON_TYPE, ...headers } });
}

/** What an unknown path and a missing or wrong key both answer, byte for byte. */
const NOT_FOUND = () => new NotFoundError("NOT_FOUND", "Not found");

/**
 * Hints written for the CLI's user that say too much to an HTTP client, by code: an unknown index's
 * lists every index of the project (and names a CLI command). The CLI, and the local channel that
 * answers it, keep the engine's.
 */
const HTTP_HINTS: Record<string, string> = {
  INDEX_NOT_FOUND: "GET /v1/indexes lists the indexes.",
};

/** The error as an HTTP client is told it. */
function forHttp(error: SemsearchError): SemsearchError {
  const hint = Object.hasOwn(HTTP_HINTS, error.code) ? HTTP_HINTS[error.code] : undefined;
  if (hint === undefined || !(error instanceof NotFoundError)) return error;
  return new NotFoundError(error.code, error.message, { hint, issues: error.issues });
}

function errorResponse(error: SemsearchError): Response {
  const headers = error instanceof RequestRefusedError ? error.headers : {};
  return jsonResponse(errorBody(forHttp(error)), error.status, headers);
}

/** Anything thrown, as a SemsearchError whose message may be shown to a client: bugs say only that they happened. */
export function classify(caught: unknown, onInternal: AppOptions["onServerError"]): SemsearchError {
  let error: SemsearchError;
  if (caught instanceof SemsearchError) error = caught;
  else error = environmentError(caught, "The server could not complete the request") ?? new InternalError("INTERNAL", caught instanceof Error ? caught.message : String(caught), { cause: caught });
  if (!(error instanceof InternalError)) return error;
  onInternal?.(error, error.cause ?? error);
  return new InternalError("INTERNAL", "The server failed to answer this request; its log has the details");
}

/**
 * A key checked; when the keys cannot be read (a damaged keys file), the caller, who may have no
 * key at all, learns only that, and the log gets the reason.
 */
function checkKey(check: (key: string) => Caller | null, key: string, onError: AppOptions["onServerError"]): Caller | null {
  try {
    return check(key);
  } catch (caught) {
    const error = caught instanceof SemsearchError ? caught : new InternalError("INTERNAL", String(caught), { cause: caught });
    onError?.(error, caught);
    throw new RequestRefusedError(503, "KEYS_UNAVAILABLE", "The server cannot check keys now; its log says why");
  }
}

/** What a browser says of a request (the Fetch standard's request headers), for checkBrowser. */
interface BrowserHeaders {
  origin: string | undefined;
  host: string | undefined;
  /** Sec-Fetch-Site: `same-origin`, `same-site`, `cross-site` or `none` (typed by the user). */
  site: string | undefined;
  /** Sec-Fetch-Mode and Sec-Fetch-Dest: a top-level navigation is `navigate` and `document`. */
  mode: string | undefined;
  dest: string | undefined;
}

/**
 * Browsers: a request from a web page carries its Origin, and only the origins given with
 * `--cors-origin` may call (else a page could write to a server without keys, or use a key it got
 * from elsewhere). Without keys, the Host must also be a loopback name (DNS rebinding).
 */
function checkBrowser({ origin, host, site, mode, dest }: BrowserHeaders, options: AppOptions): void {
  // The search page calls its own server: its origin is this server's (its Host), which a page
  // elsewhere cannot send (a page whose name was made to resolve here has its own name as Host: with
  // keys, it has no key to send; without keys, the Host check below refuses it).
  // (https too: the page served through a TLS proxy that keeps the Host)
  const sameOrigin = options.ui === true && origin !== undefined && host !== undefined && (origin === `http://${host}` || origin === `https://${host}`);
  if (origin !== undefined && !sameOrigin && !(options.corsOrigins ?? []).includes(origin)) {
    throw new RequestRefusedError(403, "ORIGIN_NOT_ALLOWED", `Requests from web pages at ${JSON.stringify(origin.slice(0, 200))} are not allowed`, { hint: "Start the server with --cors-origin <origin> to allow that page." });
  }
  // A page elsewhere can also have the browser send a GET without an Origin: an <img>, a <script>, a
  // <link>. Without keys it would get its answer (a thumbnail it can show and measure) and make the
  // server read and fetch on its behalf; the browser says where such a request comes from.
  const elsewhere = site === "cross-site" || site === "same-site";
  if (origin === undefined && elsewhere && !(mode === "navigate" && dest === "document")) {
    throw new RequestRefusedError(403, "ORIGIN_NOT_ALLOWED", "Requests that a web page elsewhere makes without CORS (an image, a script) are not allowed", { hint: "A page calls the API with fetch(), from an origin given with --cors-origin." });
  }
  if (options.checkKey === null && !isLoopbackHostHeader(host)) {
    throw new RequestRefusedError(403, "HOST_NOT_ALLOWED", "A server without keys answers only requests to a loopback name (localhost, 127.0.0.1, [::1])");
  }
}

/**
 * The route's path parameters, percent-decoded strictly: an invalid escape, or one that is not
 * UTF-8 (a lone surrogate), is refused rather than kept as literal text.
 */
function pathParams(pattern: string, pathname: string): Record<string, string> {
  const names = pattern.split("/");
  const parts = pathname.split("/");
  const params: Record<string, string> = {};
  names.forEach((name, i) => {
    if (!name.startsWith(":")) return;
    try {
      params[name.slice(1)] = decodeURIComponent(parts[i] ?? "");
    } catch {
      throw new ValidationError("INVALID_PATH", `The path segment ${JSON.stringify((parts[i] ?? "").slice(0, 200))} is not valid percent-encoded UTF-8`, { issues: [{ path: name.slice(1), message: "invalid percent-encoding" }] });
    }
  });
  return params;
}

/** The key of an `Authorization: Bearer <key>` header, or null. */
function bearer(header: string | undefined): string | null {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? "");
  return match ? (match[1] as string) : null;
}

/** The access-log form of a URL: its path and its query parameters' names, never their values. */
export function loggedPath(url: URL): string {
  const names = [...new Set(url.searchParams.keys())].map((name) => encodeURIComponent(name).slice(0, 64));
  return url.pathname.slice(0, 512) + (names.length > 0 ? `?${names.join("&")}` : "");
}

/** The query parameters, validated by a route's schema: each at most once, none unknown. */
function parseQuery(url: URL, schema: v.ObjectSchema<v.ObjectEntries, undefined> | v.StrictObjectSchema<v.ObjectEntries, undefined>): Record<string, unknown> {
  const raw: Record<string, string> = {};
  for (const [name, value] of url.searchParams) {
    if (Object.hasOwn(raw, name)) throw new ValidationError("INVALID_PARAMETER", `The query parameter ${JSON.stringify(name.slice(0, 64))} is given twice`, { issues: [{ path: name.slice(0, 64), message: "given twice" }] });
    Object.defineProperty(raw, name, { value, enumerable: true, writable: true, configurable: true });
  }
  const result = v.safeParse(schema, raw);
  if (result.success) return result.output as Record<string, unknown>;
  const issues = result.issues.map((issue) => {
    const key = String(issue.path?.[0]?.key ?? "");
    if (issue.received === "undefined") return { path: key, message: "required, but missing" };
    if (issue.type === "strict_object") return { path: key.slice(0, 64), message: `unknown parameter; known: ${Object.keys(schema.entries).join(", ") || "none"}` };
    return { path: key, message: `${issue.message} (got ${JSON.stringify(String(issue.input).slice(0, 64))})` };
  });
  const first = issues[0] as { path: string; message: string };
  throw new ValidationError("INVALID_PARAMETER", `Query parameter ${first.path}: ${first.message}`, { issues });
}

/** What the access log learns from the dispatch: the id of the key used. */
type Env = { Variables: { keyId: string } };

/** The cap on searches (and object lists) running at once, with its queue. */
export function searchGate(options: Pick<AppOptions, "maxSearches" | "maxQueuedSearches">): Gate {
  return new Gate(options.maxSearches ?? 8, options.maxQueuedSearches ?? 256, "searches");
}

const GIB = 1024 * 1024 * 1024;

/** Where objects bodies are received, holding at most `maxHeldBodyBytes` at once. */
export function bodySpool(options: Pick<AppOptions, "maxHeldBodyBytes" | "maxBodyBytes">): BodySpool {
  return new BodySpool({ maxBytes: options.maxHeldBodyBytes ?? Math.max(GIB, 2 * (options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES)) });
}

export function createApp(engine: Engine, options: AppOptions): Hono<Env> {
  const app = new Hono<Env>();
  // Searches and object lists share one cap (each may hold much memory: 10,000 objects a list);
  // adds take another (pass 1 of an add parses its body before the project lock serialises them),
  // once their body is received whole: a slow client holds no place. Thumbnails take neither: the
  // engine queues their reads in lanes of its own (images/thumbnail.ts), and a page asks for dozens,
  // which must not hold searches back.
  const gates = { search: options.searchGate ?? searchGate(options), write: new Gate(2, 64, "adds") };
  const spool = options.bodySpool ?? bodySpool(options);
  const byPath = new Map<string, Route[]>();
  for (const route of ROUTES) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);
  const document = openApiDocument(options.version);

  const dispatch = async (c: Context<Env>, routes: Route[]): Promise<Response> => {
    const url = new URL(c.req.url);
    const secured = routes.some((route) => route.auth);
    let caller: Caller | null = null;
    if (secured && options.checkKey) {
      const key = bearer(c.req.header("authorization"));
      caller = key === null ? null : checkKey(options.checkKey, key, options.onServerError);
      if (caller === null) throw NOT_FOUND();
      c.set("keyId", caller.keyId);
    }
    if (secured) checkBrowser({ origin: c.req.header("origin"), host: c.req.header("host"), site: c.req.header("sec-fetch-site"), mode: c.req.header("sec-fetch-mode"), dest: c.req.header("sec-fetch-dest") }, options);
    const method = c.req.method === "HEAD" ? "GET" : c.req.method;
    const route = routes.find((candidate) => candidate.method === method);
    if (!route) {
      const allow = [...new Set(routes.flatMap((candidate) => (candidate.method === "GET" ? ["GET", "HEAD"] : [candidate.method])))].join(", ");
      throw new RequestRefusedError(405, "METHOD_NOT_ALLOWED", `${c.req.method.slice(0, 16)} is not allowed on ${url.pathname.slice(0, 200)}; allowed: ${allow}`, { headers: { Allow: allow } });
    }
    if (route.write && caller?.readOnly) throw new RequestRefusedError(403, "READ_ONLY_KEY", `The key ${caller.keyId} is read-only: it can search and read, not ${route.summary.toLowerCase()}`);
    const query = parseQuery(url, route.query);
    const params = pathParams(route.path, url.pathname);
    const context = { engine, params, query, request: c.req.raw, bodyComplete: bodyCompleteness(c.env), options, document, spool };
    const received = route.receive ? await route.receive(context) : undefined;
    let result: Awaited<ReturnType<Route["handle"]>>;
    try {
      const run = () => route.handle({ ...context, received });
      result = route.gate ? await gates[route.gate].run(run) : await run();
    } finally {
      received?.release();
    }
    const response = route.media
      ? new Response(result.body as Uint8Array<ArrayBuffer>, { status: route.status, headers: { "content-type": route.media, "x-content-type-options": "nosniff", "cross-origin-resource-policy": "same-origin", ...result.headers } })
      : jsonResponse(result.body, route.status, result.headers);
    return c.req.method === "HEAD" ? new Response(null, { status: response.status, headers: response.headers }) : response;
  };

  if (options.onRequest) {
    const onRequest = options.onRequest;
    app.use(async (c, next) => {
      const started = performance.now();
      try {
        await next();
      } finally {
        const ms = Math.round((performance.now() - started) * 10) / 10;
        const entry: AccessEntry = { method: c.req.method.slice(0, 16), path: loggedPath(new URL(c.req.url)), status: c.res.status, ms };
        const keyId = c.get("keyId");
        if (keyId) entry.key = keyId;
        onRequest(entry);
      }
    });
  }
  if (options.corsOrigins?.length) {
    // Preflights are answered here, before the key check: a browser sends them without credentials.
    app.use(cors({ origin: options.corsOrigins, allowHeaders: ["Authorization", "Content-Type"], allowMethods: ["GET", "HEAD", "POST", "PUT", "DELETE"], exposeHeaders: ["Retry-After", "Semsearch-Index-Building", "Server-Timing"], maxAge: 600 }));
  }
  if (options.ui) {
    const assets = loadUiAssets({ auth: options.checkKey !== null, version: options.version ?? "0" }, options.uiDir);
    const page = (c: Context<Env>) => {
      if (c.req.method !== "GET" && c.req.method !== "HEAD") throw new RequestRefusedError(405, "METHOD_NOT_ALLOWED", `${c.req.method.slice(0, 16)} is not allowed on ${c.req.path.slice(0, 200)}; allowed: GET, HEAD`, { headers: { Allow: "GET, HEAD" } });
      if (assets === null) throw new NotFoundError("UI_NOT_BUILT", "The search page is not built in this copy of semsearch", { hint: "Run `npm run build`, or start the server with --no-ui." });
      const found = assets.get(c.req.path);
      if (!found) throw NOT_FOUND();
      return uiResponse(found, c.req.header("if-none-match"), c.req.method === "HEAD");
    };
    app.all("/", page);
    app.all("/ui/*", page);
  }
  for (const [path, routes] of byPath) app.all(path, (c) => dispatch(c, routes));
  app.notFound(() => errorResponse(NOT_FOUND()));
  app.onError((caught) => errorResponse(classify(caught, options.onServerError)));
  return app;
}
