/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the route table and the valibot schemas
 * that validate requests (JSON Schema draft 2020-12, OpenAPI 3.1's dialect). Pure.
 */
import { toJsonSchema, type JsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import { CreateIndexBodySchema } from "../engine/index.js";
import { ROUTES, type Route } from "./routes.js";
import { DeleteObjectsBodySchema, RESPONSES } from "./schemas.js";

const STATUS_TEXT: Record<number, string> = {
  200: "OK",
  202: "Accepted: the index is created and builds in the background",
  403: "A read-only key writing, a web page's origin not allowed (--cors-origin), or, without keys, a Host that is not loopback",
  404: "Not found: an unknown path, index or object, an invalid index type, or a missing, invalid or revoked key",
  405: "The path does not have this method",
  409: "Conflict: the project is busy (locked) or in a state that forbids the operation",
  413: "The body is too large",
  415: "The body is not JSON",
  422: "Validation error: a parameter or the body is wrong (the errors name where)",
  500: "A bug: the server's log has the details",
  503: "Too busy (Retry-After), or the machine cannot do it (a full or read-only disk)",
};

/**
 * Schemas the converter cannot express (valibot `custom` checks: field-name records that keep keys
 * such as `constructor`) are described by what they accept.
 */
function convert(schema: v.GenericSchema): JsonSchema {
  const json = toJsonSchema(schema, {
    target: "draft-2020-12",
    typeMode: "input",
    overrideSchema: ({ valibotSchema }) => (valibotSchema.type === "custom" ? { type: "object", additionalProperties: { type: "string" } } : undefined),
  }) as Record<string, unknown>;
  delete json.$schema;
  return json as JsonSchema;
}

function ref(name: string) {
  return { $ref: `#/components/schemas/${name}` };
}

function parameters(route: Route) {
  const path = [...route.path.matchAll(/:(\w+)/g)].map((match) => ({ name: match[1], in: "path", required: true, schema: { type: "string" } }));
  const entries = Object.entries(route.query.entries) as [string, v.GenericSchema][];
  const query = entries.map(([name, schema]) => {
    const json = convert(schema.type === "optional" ? (schema as unknown as v.OptionalSchema<v.GenericSchema, undefined>).wrapped : schema) as Record<string, unknown>;
    const { description, ...rest } = json;
    return { name, in: "query", required: schema.type !== "optional", ...(description ? { description } : {}), schema: rest };
  });
  return [...path, ...query];
}

const BODIES = {
  index: { "application/json": { schema: ref("CreateIndexBody") } },
  deletion: { "application/json": { schema: ref("DeleteObjectsBody") } },
  object: { "application/json": { schema: { type: "object", description: "One object; its id field, when present, must equal the path's id." } } },
  objects: {
    "application/json": { schema: { oneOf: [{ type: "array", items: { type: "object" } }, { type: "object" }], description: "A JSON array of objects, or one object. All or nothing: one malformed object adds none." } },
    "application/x-ndjson": { schema: { type: "string", description: "JSON Lines: one object per line. All or nothing." } },
  },
};

function operation(route: Route) {
  const responses: Record<string, unknown> = {
    [route.status]: { description: STATUS_TEXT[route.status] ?? "OK", content: route.media ? { [route.media]: { schema: { type: "string", contentMediaType: route.media } } } : { "application/json": { schema: ref(route.response) } } },
  };
  // Every keyed route may answer: 403 (a web page's origin, or a Host other than loopback without keys),
  // 404 (the key), 405, 503 (keys that cannot be read, a disk at fault); with path parameters, 422.
  const keyed = route.auth ? [403, 404, 405, 503, ...(route.path.includes(":") ? [422] : [])] : [];
  const errors = [...keyed, ...route.errors, 500];
  for (const status of [...new Set(errors)].sort()) responses[status] = { description: STATUS_TEXT[status] ?? "Error", content: { "application/json": { schema: ref("Error") } } };
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.auth ? {} : { security: [] }),
    parameters: parameters(route),
    ...(route.body ? { requestBody: { required: true, content: BODIES[route.body] } } : {}),
    responses,
  };
}

export function openApiDocument(version = "0.1.0"): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    const path = route.path.replace(/:(\w+)/g, "{$1}");
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(route) };
  }
  const schemas: Record<string, unknown> = { CreateIndexBody: convert(CreateIndexBodySchema), DeleteObjectsBody: convert(DeleteObjectsBodySchema) };
  for (const [name, schema] of Object.entries(RESPONSES)) schemas[name] = convert(schema as v.GenericSchema);
  return {
    openapi: "3.1.0",
    info: {
      title: "semsearch",
      version,
      description: "The Semantic Search Service's HTTP API over a local semsearch project. Every JSON answer is what `semsearch --json` prints for the same operation.",
    },
    security: [{ bearer: [] }],
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "A key from `semsearch keys create`." } }, schemas },
    paths,
  };
}
