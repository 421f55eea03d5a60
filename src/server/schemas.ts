/**
 * The schemas of the HTTP API: query parameters (which validate requests), and response shapes
 * (which document them). The OpenAPI document is generated from these and from the engine's
 * create-index body schema; a test checks real responses against it.
 */
import * as v from "valibot";
import { CreateIndexBodySchema, MAX_LIMIT } from "../engine/index.js";

/** A whole number as query text: `10`, or `10.0` as the spec's numbers may be written. */
const WholeNumber = (description: string) => v.pipe(v.string(), v.regex(/^\d{1,15}(\.0+)?$/, "expected a whole number"), v.description(description));

/**
 * A decimal number as query text, as `--semantic-ratio` takes it (cli/options.ts numberArg): `0.5`,
 * `.5`, `0.`, `-0`, any number of digits; not `1e-1`, `0x1`, `NaN` or `Infinity`. Its range is the
 * engine's check (422 naming it), so the CLI and HTTP accept and refuse the same values.
 */
const DECIMAL = /^\s*[+-]?(\d+\.?\d*|\.\d+)\s*$/;

export const SearchQuerySchema = v.strictObject({
  query: v.pipe(v.string(), v.description("The search text.")),
  object_fields: v.optional(v.pipe(v.string(), v.description("Object fields to return: `*` for all, or a comma-separated list (default: `id`)."))),
  result_fields: v.optional(v.pipe(v.string(), v.description("`highlights` returns the highlights of each result."))),
  results_fields: v.optional(v.pipe(v.string(), v.description("Another spelling of `result_fields` (the spec uses both)."))),
  offset: v.optional(WholeNumber("Results to skip (0 to 9,999).")),
  limit: v.optional(WholeNumber(`Results per page (1 to ${MAX_LIMIT}, default 10).`)),
  filter_query: v.optional(v.pipe(v.string(), v.description("A filter in the syntax of `semsearch search --filter`, e.g. `price:<20 AND in_stock:true`."))),
  mode: v.optional(v.pipe(v.picklist(["hybrid", "lexical", "vector"], "expected hybrid, lexical or vector"), v.description("Rank with one part of a hybrid index only, for diagnosis (default: hybrid)."))),
  semantic_ratio: v.optional(v.pipe(v.string(), v.regex(DECIMAL, "expected a number from 0 to 1"), v.description("Extension: how much the vector part counts, from 0 (lexical only) to 1 (vectors only); default 0.4, the tuned fusion weight."))),
  highlights_rank: v.optional(v.pipe(v.picklist(["true", "false"], "expected true or false"), v.description("Extension: `false` returns highlights without ordering the results by them (the order of the same search without highlights, as the search page shows). Default `true`: with `highlights`, results are ordered by their best highlight."))),
});

export const ListObjectsQuerySchema = v.strictObject({
  offset: v.optional(WholeNumber("Objects to skip, in id order.")),
  limit: v.optional(WholeNumber("Objects to list (1 to 10,000, default 100).")),
});

export const AddObjectsQuerySchema = v.strictObject({
  id_field: v.optional(v.pipe(v.string(), v.minLength(1), v.description("Field holding each object's id (default `id`). Named, every object must have it; not named, objects without an `id` get a generated id, unless a field of theirs looks like their id (`sku`, `uuid`…): then 422 `NO_ID_FIELD` names it."))),
  generate_ids: v.optional(v.pipe(v.picklist(["true", "false"], "expected true or false"), v.description("`true`: objects without an id get a generated one, whatever their fields look like."))),
});

export const ThumbnailQuerySchema = v.strictObject({
  image: v.pipe(v.string(), v.minLength(1), v.description("The image: one of the object's own values, as a search's `media_identifier` gives it.")),
  size: v.optional(WholeNumber("Largest side in pixels (16 to 1,024, default 256).")),
});

export const NoQuerySchema = v.strictObject({});

/** The body of `DELETE /v1/objects` (an extension): ids, or a filter over an index's filterable fields. */
export const DeleteObjectsBodySchema = v.strictObject({
  ids: v.optional(v.pipe(v.array(v.pipe(v.string("expected an object id (a string)"), v.minLength(1, "an id is not empty"))), v.description("The objects to delete: all of them, or none when one is not stored (404)."))),
  filter: v.optional(v.pipe(v.string(), v.description("Deletes every object this filter matches in `index` (the filter syntax of search)."))),
  index: v.optional(v.pipe(v.string(), v.description("The index (id or name) whose filterable fields `filter` reads; refused (409) while it is building."))),
});

const ErrorEntry = v.object({
  code: v.string(),
  message: v.string(),
  hint: v.optional(v.string()),
  issues: v.optional(v.array(v.object({ path: v.string(), message: v.string(), column: v.optional(v.number()) }))),
});
export const ErrorBodySchema = v.strictObject({ errors: v.pipe(v.array(ErrorEntry), v.minLength(1)) });

const StatusCounts = v.strictObject({ UPLOADED: v.number(), PROCESSING: v.number(), READY: v.number(), ERROR: v.number() });

export const IndexSchema = v.object({
  id: v.pipe(v.string(), v.regex(/^idx_[A-Za-z0-9_-]+$/)),
  name: v.optional(v.string()),
  configuration: CreateIndexBodySchema.entries.configuration,
  model: v.string(),
  dimension: v.number(),
  embedding: v.optional(v.record(v.string(), v.unknown())),
  normalization: v.optional(v.pipe(v.literal("NFC"), v.description("Indexes created since 6 December 2026: text, queries and filter values are compared in Unicode NFC."))),
  created_at: v.string(),
  state: v.picklist(["BUILDING", "READY"]),
  status: StatusCounts,
  blocked: v.optional(v.object({ code: v.string(), message: v.string() })),
});

const TextHighlight = v.strictObject({
  highlight_type: v.literal("text"),
  references: v.array(v.strictObject({ source: v.string(), position: v.strictObject({ start_char: v.number(), end_char: v.number() }) })),
  highlight: v.strictObject({ text: v.string() }),
});
const ImageHighlight = v.strictObject({ reference_type: v.literal("image"), media_identifier: v.string() });

const Explain = v.strictObject({
  ranking: v.picklist(["hybrid", "lexical", "vector", "highlight"]),
  lexical: v.optional(v.nullable(v.strictObject({ score: v.number(), normalized: v.number() }))),
  vector: v.optional(v.nullable(v.strictObject({ similarity: v.number(), normalized: v.number() }))),
  semantic_ratio: v.optional(v.number()),
  fused: v.optional(v.number()),
  highlight: v.optional(v.strictObject({ score: v.number() })),
});

export const SearchResponseSchema = v.strictObject({
  results: v.array(
    v.strictObject({
      id: v.string(),
      object: v.record(v.string(), v.unknown()),
      score: v.optional(v.pipe(v.number(), v.description("Extension, with result_fields=score: the score that orders the results."))),
      explain: v.optional(v.pipe(Explain, v.description("Extension, with result_fields=explain: what the score is made of."))),
      highlights: v.optional(v.array(v.union([TextHighlight, ImageHighlight]))),
    }),
  ),
  pagination: v.strictObject({
    pages: v.number(),
    page: v.number(),
    next: v.optional(v.strictObject({ offset: v.number(), limit: v.number() })),
    statistics: v.strictObject({ total: v.number(), total_calculation: v.picklist(["exact", "minimum"]) }),
  }),
});

const StoredObject = { id: v.string(), object: v.record(v.string(), v.unknown()), created_at: v.string(), updated_at: v.string() };

export const ObjectInfoSchema = v.strictObject({
  ...StoredObject,
  status: v.strictObject({
    state: v.picklist(["complete", "incomplete"]),
    indexes: v.array(v.strictObject({ id: v.string(), status: v.picklist(["UPLOADED", "PROCESSING", "READY", "ERROR"]), searchable: v.boolean(), error: v.optional(v.string()) })),
  }),
});

export const RESPONSES = {
  Error: ErrorBodySchema,
  Created: v.strictObject({ id: v.string() }),
  Index: IndexSchema,
  IndexList: v.strictObject({ indexes: v.array(IndexSchema) }),
  IndexStatus: v.strictObject({ status: StatusCounts }),
  Deleted: v.strictObject({ deleted: v.string() }),
  DeletedMany: v.strictObject({ count: v.number(), deleted: v.array(v.string()) }),
  SearchResponse: SearchResponseSchema,
  ObjectInfo: ObjectInfoSchema,
  ObjectList: v.strictObject({ objects: v.array(v.strictObject(StoredObject)) }),
  Added: v.strictObject({ count: v.number(), ids: v.optional(v.array(v.string())) }),
  WorkerStatus: v.object({
    running: v.boolean(),
    pid: v.nullable(v.number()),
    log: v.string(),
    state: v.optional(v.record(v.string(), v.unknown())),
    indexes: v.array(v.strictObject({ id: v.string(), name: v.optional(v.string()), status: StatusCounts })),
  }),
  Health: v.strictObject({ status: v.literal("ok") }),
  Thumbnail: v.pipe(v.string(), v.description("PNG bytes")),
  Ready: v.strictObject({ status: v.literal("ready") }),
  OpenApi: v.object({ openapi: v.string(), info: v.record(v.string(), v.unknown()), paths: v.record(v.string(), v.unknown()) }),
} as const;
