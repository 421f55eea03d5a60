/**
 * The routes of the HTTP API, as data: method, path, scope, query schema, success status and
 * response shape (which the OpenAPI document is generated from), and a handler that is one engine
 * call. Each answer is what the matching CLI command prints with `--json`.
 */
import * as v from "valibot";
import { confinedBase, EnvironmentError, NotFoundError, searchResponse, ValidationError, type Engine, type OptionSpelling, type SemsearchError } from "../engine/index.js";
import { checkJsonMediaType, readJsonBody } from "./body.js";
import type { BodySpool, ReceivedBody } from "./spool.js";
import { AddObjectsQuerySchema, DeleteObjectsBodySchema, ListObjectsQuerySchema, NoQuerySchema, SearchQuerySchema, ThumbnailQuerySchema, type RESPONSES } from "./schemas.js";

/** How an HTTP client sets the id options of `POST /v1/objects`, for the engine's messages. */
const QUERY_SPELLING: OptionSpelling = { idField: (field) => `?id_field=${encodeURIComponent(field)}`, generateIds: "?generate_ids=true" };

/** Whether a server is ready to answer searches (its models loaded, its indexes opened); why not, else. */
export type Readiness = { ready: true } | { ready: false; error?: SemsearchError };

export interface RouteOptions {
  /**
   * Whether the server is ready (`GET /readyz`): `serve` says so once its models are loaded and its
   * indexes opened and prewarmed. Ready when absent.
   */
  readiness?: () => Readiness;
  /** Largest body of an objects request, in bytes (default 64 MiB). */
  maxBodyBytes?: number;
  /**
   * The one folder whose image files objects added over HTTP may name (absolute; relative paths
   * resolve against it). Default: none, so only image URLs are read for them: a client cannot make
   * the server read its files.
   */
  imageRoot?: string;
}

/** Largest body of a create-index request. */
export const MAX_INDEX_BODY_BYTES = 1024 * 1024;
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;

export interface RouteContext {
  engine: Engine;
  params: Record<string, string>;
  query: Record<string, unknown>;
  request: Request;
  /** Whether the whole body arrived (asked when its stream ends: a dropped upload can end it early). */
  bodyComplete?: () => boolean;
  options: RouteOptions;
  /** The OpenAPI document (for its own route). */
  document: unknown;
  /** Where request bodies are received before their route's gate is taken. */
  spool: BodySpool;
  /** The body `receive` read, once it has. */
  received?: ReceivedBody;
}

type QuerySchema = v.StrictObjectSchema<v.ObjectEntries, undefined>;

export interface Route {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** Hono path pattern; `:id` parameters. */
  path: string;
  operationId: string;
  summary: string;
  /** Whether a key is needed (every /v1 route but the OpenAPI document). */
  auth: boolean;
  /** Whether it changes the project (read-only keys may not). */
  write: boolean;
  /** The cap on concurrent work it shares: searches and lists, or adds (see app.ts). */
  gate?: "search" | "write";
  query: QuerySchema;
  /** The request body, for the document. */
  body?: "index" | "object" | "objects" | "deletion";
  status: number;
  response: keyof typeof RESPONSES;
  /** A route that answers bytes of this media type (its handler's body is a Uint8Array), not JSON. */
  media?: string;
  /** Other statuses the route answers with, for the document (every route also has 404 and 500). */
  errors: number[];
  /**
   * Reads the request body whole, before the route's gate is taken (app.ts), so a client that sends
   * slowly holds no place that others wait for. Its file is removed once `handle` is done.
   */
  receive?(ctx: RouteContext): Promise<ReceivedBody>;
  handle(ctx: RouteContext): Promise<{ body: unknown; headers?: Record<string, string> }>;
}

function wholeNumber(text: unknown): number | undefined {
  return typeof text === "string" ? Number(text) : undefined;
}

function bodyBytes(options: RouteOptions): number {
  return options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
}

/** An objects body, checked for its media type and received whole (413 past --max-body-mb). */
function receiveObjects({ request, bodyComplete, options, spool }: RouteContext, lines: boolean): Promise<ReceivedBody> {
  checkJsonMediaType(request.headers.get("content-type") ?? undefined, lines);
  return spool.receive(request, bodyBytes(options), bodyComplete);
}

/** The received body as the engine's input; its local image files confined to the server's image root. */
function objectsInput({ received, options }: RouteContext) {
  if (received === undefined) throw new Error("the objects body was not received");
  return { path: received.path, source: "body", base: confinedBase(options.imageRoot ?? null) };
}

const search: Route["handle"] = async ({ engine, params, query }) => {
  const q = query as v.InferOutput<typeof SearchQuerySchema>;
  if (q.result_fields !== undefined && q.results_fields !== undefined) {
    throw new ValidationError("INVALID_PARAMETER", "Give result_fields or results_fields, not both", { issues: [{ path: "results_fields", message: "given with result_fields" }] });
  }
  const started = performance.now();
  const page = await engine.search(params.id as string, {
    query: q.query,
    limit: wholeNumber(q.limit),
    offset: wholeNumber(q.offset),
    objectFields: q.object_fields,
    resultFields: q.result_fields ?? q.results_fields,
    mode: q.mode,
    ...(q.semantic_ratio === undefined ? {} : { semanticRatio: Number(q.semantic_ratio) }),
    filter: q.filter_query,
    snippets: false,
    highlightsRank: q.highlights_rank !== "false",
  });
  // The engine's time in the standard Server-Timing header (what HTTP adds is the rest of the
  // client's wait); a search of an index still building says so in a header. The body stays the service's shape.
  const headers: Record<string, string> = { "Server-Timing": `search;dur=${(performance.now() - started).toFixed(1)}` };
  if (page.building) headers["Semsearch-Index-Building"] = `${page.building.searchable}/${page.building.total}`;
  return { body: searchResponse(page), headers };
};

/** A JSON body its schema refuses: 422 naming the first field at fault. */
function bodyInvalid(issues: readonly v.BaseIssue<unknown>[]): ValidationError {
  const listed = issues.map((issue) => {
    const path = v.getDotPath(issue) ?? "body";
    const message = issue.type === "strict_object" ? "unknown field; known: ids, filter, index" : issue.received === "undefined" ? "required, but missing" : issue.message;
    return { path: path.slice(0, 100), message };
  });
  const first = listed[0] as { path: string; message: string };
  return new ValidationError("INVALID_BODY", `The body's ${first.path}: ${first.message}`, { issues: listed });
}

/**
 * A PNG of one of an object's images, for the search page (the browser never fetches an object's
 * URLs itself). No gate: the engine answers what needs no read at once and queues the rest in its
 * own lanes (images/thumbnail.ts), leaving them when the client goes (the request's signal).
 */
const thumbnail: Route["handle"] = async ({ engine, params, query, request }) => {
  const q = query as v.InferOutput<typeof ThumbnailQuerySchema>;
  const size = wholeNumber(q.size) ?? 256;
  if (size < 16 || size > 1024) throw new ValidationError("INVALID_PARAMETER", `Query parameter size: expected 16 to 1024 pixels (got ${size})`, { issues: [{ path: "size", message: "expected 16 to 1024" }] });
  const png = await engine.imageThumbnail(params.id as string, q.image, size, { signal: request.signal });
  if (png === null) throw new NotFoundError("IMAGE_UNAVAILABLE", "The image cannot be read or fetched now, or is not an image the server can decode");
  return { body: png, headers: { "cache-control": "private, max-age=300" } };
};

const READ_ERRORS = [422];
const WRITE_ERRORS = [403, 409, 413, 415, 422, 503];

export const ROUTES: Route[] = [
  { method: "GET", path: "/healthz", operationId: "health", summary: "Health check", auth: false, write: false, query: NoQuerySchema, status: 200, response: "Health", errors: [], handle: async () => ({ body: { status: "ok" } }) },
  {
    method: "GET", path: "/readyz", operationId: "ready", summary: "Readiness: models loaded, indexes opened and prewarmed", auth: false, write: false, query: NoQuerySchema, status: 200, response: "Ready", errors: [503],
    handle: async ({ options }) => {
      const state = options.readiness?.() ?? { ready: true };
      if (!state.ready && !state.error) throw new EnvironmentError("STARTING", "The server is still loading its models and opening its indexes", { hint: "Try again in a moment." });
      // (always 503, whatever the failure's own status: a load balancer reads the status alone)
      if (!state.ready) throw new EnvironmentError("NOT_READY", `The server cannot answer searches: ${state.error?.message}`, state.error?.hint ? { hint: state.error.hint } : {});
      return { body: { status: "ready" } };
    },
  },
  { method: "GET", path: "/v1/openapi.json", operationId: "openapi", summary: "This document", auth: false, write: false, query: NoQuerySchema, status: 200, response: "OpenApi", errors: [], handle: async ({ document }) => ({ body: document }) },
  {
    method: "POST", path: "/v1/indexes", operationId: "createIndex", summary: "Create an index", auth: true, write: true, query: NoQuerySchema, body: "index", status: 202, response: "Created", errors: [403, 409, 413, 415, 422, 503],
    handle: async ({ engine, request, bodyComplete }) => {
      checkJsonMediaType(request.headers.get("content-type") ?? undefined, false);
      // Model folders are the server's files: a client names hub ids only.
      return { body: await engine.createIndex(await readJsonBody(request, MAX_INDEX_BODY_BYTES, bodyComplete), { modelFolders: false }) };
    },
  },
  { method: "GET", path: "/v1/indexes", operationId: "listIndexes", summary: "List indexes", auth: true, write: false, query: NoQuerySchema, status: 200, response: "IndexList", errors: [], handle: async ({ engine }) => ({ body: { indexes: await engine.listIndexes() } }) },
  { method: "GET", path: "/v1/indexes/:id", operationId: "getIndex", summary: "Get an index", auth: true, write: false, query: NoQuerySchema, status: 200, response: "Index", errors: [], handle: async ({ engine, params }) => ({ body: await engine.getIndex(params.id as string) }) },
  { method: "DELETE", path: "/v1/indexes/:id", operationId: "deleteIndex", summary: "Delete an index", auth: true, write: true, query: NoQuerySchema, status: 200, response: "Deleted", errors: [403, 409, 503], handle: async ({ engine, params }) => ({ body: { deleted: await engine.deleteIndex(params.id as string) } }) },
  { method: "GET", path: "/v1/indexes/:id/status", operationId: "indexStatus", summary: "Count an index's objects per state", auth: true, write: false, query: NoQuerySchema, status: 200, response: "IndexStatus", errors: [], handle: async ({ engine, params }) => ({ body: { status: await engine.indexStatus(params.id as string) } }) },
  { method: "GET", path: "/v1/indexes/:id/search", operationId: "search", summary: "Search an index", auth: true, write: false, gate: "search", query: SearchQuerySchema, status: 200, response: "SearchResponse", errors: [...READ_ERRORS, 503], handle: search },
  {
    method: "POST", path: "/v1/objects", operationId: "addObjects", summary: "Add or replace objects", auth: true, write: true, gate: "write", query: AddObjectsQuerySchema, body: "objects", status: 200, response: "Added", errors: WRITE_ERRORS,
    receive: (ctx) => receiveObjects(ctx, true),
    handle: async (ctx) => {
      const query = ctx.query as v.InferOutput<typeof AddObjectsQuerySchema>;
      return { body: await ctx.engine.addObjects([objectsInput(ctx)], { idField: query.id_field, generateIds: query.generate_ids === "true", spelling: QUERY_SPELLING }) };
    },
  },
  {
    method: "GET", path: "/v1/objects", operationId: "listObjects", summary: "List objects", auth: true, write: false, gate: "search", query: ListObjectsQuerySchema, status: 200, response: "ObjectList", errors: READ_ERRORS,
    handle: async ({ engine, query }) => {
      const q = query as v.InferOutput<typeof ListObjectsQuerySchema>;
      return { body: { objects: await engine.listObjects(wholeNumber(q.offset) ?? 0, wholeNumber(q.limit) ?? 100) } };
    },
  },
  { method: "GET", path: "/v1/objects/:id/thumbnail", operationId: "objectThumbnail", summary: "A PNG thumbnail of one of an object's images (extension, for the search page)", auth: true, write: false, query: ThumbnailQuerySchema, status: 200, response: "Thumbnail", media: "image/png", errors: [...READ_ERRORS, 503], handle: thumbnail },
  { method: "GET", path: "/v1/objects/:id", operationId: "getObject", summary: "Get an object", auth: true, write: false, query: NoQuerySchema, status: 200, response: "ObjectInfo", errors: [], handle: async ({ engine, params }) => ({ body: await engine.getObject(params.id as string) }) },
  {
    method: "PUT", path: "/v1/objects/:id", operationId: "putObject", summary: "Add or replace one object", auth: true, write: true, gate: "write", query: NoQuerySchema, body: "object", status: 200, response: "Added", errors: WRITE_ERRORS,
    receive: (ctx) => receiveObjects(ctx, false),
    handle: async (ctx) => ({ body: await ctx.engine.addObjects([objectsInput(ctx)], { id: ctx.params.id as string }) }),
  },
  {
    method: "DELETE", path: "/v1/objects/:id", operationId: "deleteObject", summary: "Delete an object", auth: true, write: true, query: NoQuerySchema, status: 200, response: "Deleted", errors: [403, 409, 503],
    handle: async ({ engine, params }) => {
      await engine.deleteObject(params.id as string);
      return { body: { deleted: params.id } };
    },
  },
  {
    // (an extension of the spec: many objects in one delete, all or none)
    method: "DELETE", path: "/v1/objects", operationId: "deleteObjects", summary: "Delete objects by id, or every object a filter matches in an index", auth: true, write: true, query: NoQuerySchema, body: "deletion", status: 200, response: "DeletedMany", errors: [403, 409, 413, 415, 422, 503],
    handle: async ({ engine, request, bodyComplete, options }) => {
      checkJsonMediaType(request.headers.get("content-type") ?? undefined, false);
      const given = await readJsonBody(request, bodyBytes(options), bodyComplete, "A delete body (start the server with a larger --max-body-mb for more ids)");
      if (typeof given !== "object" || given === null || Array.isArray(given)) {
        throw new ValidationError("INVALID_BODY", 'The body must be a JSON object: {"ids": [...]} or {"filter": "...", "index": "..."}', { issues: [{ path: "body", message: "not an object" }] });
      }
      const body = v.safeParse(DeleteObjectsBodySchema, given);
      if (!body.success) throw bodyInvalid(body.issues);
      const { ids, filter, index } = body.output;
      if ((ids === undefined) === (filter === undefined)) throw new ValidationError("INVALID_BODY", 'Give "ids" (an array of object ids) or "filter" with "index", not both', { issues: [{ path: ids === undefined ? "ids" : "filter", message: "one of ids or filter" }] });
      if (filter !== undefined && index === undefined) throw new ValidationError("INVALID_BODY", '"filter" needs "index": the index whose filterable fields it reads', { issues: [{ path: "index", message: "missing" }] });
      // (no ids is refused as the CLI refuses it; a filter that matches nothing deletes nothing)
      const targets = ids ?? (await engine.objectsMatching(index as string, filter as string));
      const deleted = ids === undefined && targets.length === 0 ? [] : await engine.deleteObjects(targets);
      return { body: { count: deleted.length, deleted } };
    },
  },
  { method: "GET", path: "/v1/worker", operationId: "workerStatus", summary: "Background worker status", auth: true, write: false, query: NoQuerySchema, status: 200, response: "WorkerStatus", errors: [], handle: async ({ engine }) => ({ body: await engine.workerStatus() }) },
];
