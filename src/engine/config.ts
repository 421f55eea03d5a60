/**
 * Index configuration: the spec's `{"configuration": {...}}` body, parsed,
 * validated and normalised. Pure: no fs, no clock, no model.
 */
import * as v from "valibot";
import { NotFoundError, ValidationError, type ErrorIssue } from "./errors.js";
import { fieldRule, FieldRules, isPlainObject, pathSegments, ruleAdmits, setOwn, type RuleKind } from "./fields.js";
import { compileDelimiter } from "./indexing/segment.js";
import { MODEL_DTYPES } from "./embedding/model-spec.js";
import { TOKENIZER_LANGUAGES, TOKENIZER_OPTIONS } from "./tokenizer.js";

/** Field types a filterable field can be declared as (`configuration.fields.types`). */
export const FIELD_TYPES = ["string", "int", "float", "bool", "datetime"] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** Index types of the service. */
export const INDEX_TYPES = ["text", "image"] as const;
export type IndexTypeName = (typeof INDEX_TYPES)[number];

const FieldList = v.array(v.pipe(v.string(), v.minLength(1, "a field name cannot be empty")));

/** How valibot names a value's type in messages (`"x"`, `7`, `Array`, `Object`, `null`). */
function received(value: unknown): string {
  if (Array.isArray(value)) return "Array";
  if (value === null || typeof value !== "object") return typeof value === "string" || typeof value === "number" ? JSON.stringify(value) : String(value);
  return "Object";
}

/**
 * A record of field name → string. Unlike `v.record`, which silently drops the keys `constructor`,
 * `prototype` and `__proto__`, it keeps every own key: any text is a field name, and a dropped
 * `types` entry would leave the field without its declared type.
 */
const FieldRecord = v.pipe(
  v.custom<Record<string, unknown>>(isPlainObject, (issue) => `expected Object, received ${issue.received}`),
  v.rawTransform(({ dataset, addIssue }) => {
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(dataset.value)) {
      if (typeof value === "string") setOwn(out, key, value);
      else addIssue({ message: `expected string, received ${received(value)}`, path: [{ type: "object", origin: "value", input: dataset.value, key, value }] });
    }
    return out;
  }),
);

const AllowDeny = v.strictObject({ allow: v.optional(FieldList), deny: v.optional(FieldList) });

/**
 * A tokenizer's language, in any case (`german`, `GERMAN`), kept as LanceDB names it (`German`):
 * LanceDB takes only its own spelling (any other aborts the process inside it).
 */
const TokenizerLanguage = v.pipe(
  v.string(),
  v.description(`One of ${TOKENIZER_LANGUAGES.join(", ")}, in any case; stored as written here.`),
  v.transform((name: string) => TOKENIZER_LANGUAGES.find((language) => language.toLowerCase() === name.toLowerCase()) ?? name),
  v.picklist(TOKENIZER_LANGUAGES, `expected one of ${TOKENIZER_LANGUAGES.join(", ")} (in any case)`),
);

const ConfigurationSchema = v.strictObject({
  index_type: v.strictObject({
    name: v.string(),
    highlights: v.optional(v.strictObject({ text: v.optional(v.boolean()) })),
    /** semsearch extension: vector search only, no lexical part. */
    neural_only: v.optional(v.boolean()),
  }),
  fields: v.optional(
    v.strictObject({
      crawlable: v.optional(AllowDeny),
      searchable: v.optional(AllowDeny),
      filterable: v.optional(AllowDeny),
      types: v.optional(FieldRecord),
      segment_delimiter: v.optional(FieldRecord),
      /** semsearch extension, image indexes: fields whose every string value is an image reference (else detected per value). */
      images: v.optional(FieldList),
    }),
  ),
  /** semsearch extension: the embedding model of this index (default: the bundled one). */
  model: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(4096))),
  /** semsearch extension: the ONNX weights of a Hugging Face model, `q8` or `fp32` (default: q8 where the model offers it). */
  model_dtype: v.optional(v.picklist(MODEL_DTYPES)),
  /** semsearch extension: how the full-text part cuts words (tokenizer.ts; default DEFAULT_TOKENIZER). */
  tokenizer: v.optional(
    v.strictObject({
      stem: v.optional(v.boolean()),
      stop_words: v.optional(v.boolean()),
      ascii_folding: v.optional(v.boolean()),
      lowercase: v.optional(v.boolean()),
      language: v.optional(TokenizerLanguage),
    }),
  ),
});

/**
 * An index name (semsearch extension): usable wherever an index id is. Letters, digits, `.`, `_`
 * and `-`, starting with a letter or digit, at most 64 characters; not `idx_…`, which ids use.
 */
export const INDEX_NAME = /^(?!idx_)[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const CreateIndexBodySchema = v.strictObject({
  /** semsearch extension: a unique name for the index. */
  name: v.optional(v.pipe(v.string(), v.regex(INDEX_NAME, "an index name is 1–64 letters, digits, '.', '_' or '-', starting with a letter or digit, and not idx_…"))),
  configuration: ConfigurationSchema,
});

export type IndexConfiguration = v.InferOutput<typeof ConfigurationSchema>;
export interface CreateIndexBody {
  name?: string;
  configuration: IndexConfiguration;
}

function describeIssue(issue: v.BaseIssue<unknown>): ErrorIssue {
  const keys = (issue.path ?? []).map((item) => String(item.key));
  if (issue.type === "strict_object" && issue.expected === "never" && keys.length > 0) {
    const unknown = keys.pop() as string;
    const path = keys.join(".") || "(body)";
    if (path === "configuration.tokenizer") return { path, message: `unknown tokenizer option "${unknown}"; the options are ${TOKENIZER_OPTIONS.join(", ")}` };
    return { path, message: `unknown key "${unknown}"` };
  }
  if (issue.type === "picklist" && keys.join(".") === "configuration.tokenizer.language") return { path: keys.join("."), message: `${issue.message}, got ${issue.received}` };
  const path = keys.join(".") || "(body)";
  if (issue.received === "undefined") return { path, message: "required, but missing" };
  if (issue.type === "custom") return { path, message: issue.message };
  if (issue.kind === "schema") {
    return { path, message: `expected ${issue.expected}, received ${issue.received}` };
  }
  return { path, message: issue.message };
}

function fail(issues: ErrorIssue[]): never {
  const first = issues[0] as ErrorIssue;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : "";
  throw new ValidationError("INVALID_CONFIG", `Invalid index configuration: ${first.path}: ${first.message}${more}`, {
    issues,
  });
}

/**
 * Parses a create-index request body (already JSON-decoded).
 * Throws NotFoundError INVALID_INDEX_TYPE for a type other than text/image (the service's 404)
 * and ValidationError INVALID_CONFIG (422) for everything else, listing every issue with its path.
 */
export function parseCreateIndexBody(body: unknown): CreateIndexBody {
  const typeName = (body as { configuration?: { index_type?: { name?: unknown } } } | null)?.configuration
    ?.index_type?.name;
  if (typeof typeName === "string" && !(INDEX_TYPES as readonly string[]).includes(typeName)) {
    throw new NotFoundError("INVALID_INDEX_TYPE", `Invalid index type "${typeName}". Known: ${INDEX_TYPES.join(", ")}`);
  }
  const result = v.safeParse(CreateIndexBodySchema, body);
  if (!result.success) fail(result.issues.map(describeIssue));
  const issues = checkMeaning(result.output.configuration);
  if (issues.length > 0) fail(issues);
  return result.output;
}

function checkMeaning(config: IndexConfiguration): ErrorIssue[] {
  const issues: ErrorIssue[] = [];
  if (config.tokenizer !== undefined && isNeuralOnly(config)) issues.push({ path: "configuration.tokenizer", message: "a neural-only index has no full-text part to tokenize" });
  for (const [field, type] of Object.entries(config.fields?.types ?? {})) {
    if (!(FIELD_TYPES as readonly string[]).includes(type)) {
      issues.push({
        path: `configuration.fields.types.${field}`,
        message: `unsupported field type "${type}". Supported: ${FIELD_TYPES.join(", ")}`,
      });
    }
  }
  issues.push(...checkFieldRules(config));
  const rules = new FieldRules(config);
  (config.fields?.images ?? []).forEach((field, i) => {
    const path = `configuration.fields.images.${i}`;
    if (config.index_type.name !== "image") issues.push({ path, message: "image fields are for image indexes (index_type.name \"image\")" });
    else if (pathSegments(field).length === 0) issues.push({ path, message: `malformed field path "${field}" (dots separate nested keys)` });
    else if (!rules.admits("searchable", field)) issues.push({ path, message: `"${field}" is not a searchable field: an image field must be searchable` });
  });
  for (const [field, source] of Object.entries(config.fields?.segment_delimiter ?? {})) {
    const path = `configuration.fields.segment_delimiter.${field}`;
    if (field.includes(".")) {
      issues.push({ path, message: "highlights are cut from top-level text fields; a nested path has no segments" });
      continue;
    }
    if (!rules.admits("searchable", field)) {
      issues.push({ path, message: `"${field}" is not a searchable field, so it has no highlight segments` });
      continue;
    }
    const compiled = compileDelimiter(source);
    if (!compiled.ok) issues.push({ path, message: `invalid regular expression /${preview(source)}/: ${compiled.reason}` });
    else if (compiled.delimiter.test("")) issues.push({ path, message: `regular expression /${preview(source)}/ matches the empty string` });
  }
  return issues;
}

/** A pattern as quoted in a message: long ones are cut. */
function preview(source: string): string {
  return source.length > 60 ? `${source.slice(0, 60)}…` : source;
}

/** Field names must be well-formed paths; allow lists and types must name fields the index crawls. */
function checkFieldRules(config: IndexConfiguration): ErrorIssue[] {
  const issues: ErrorIssue[] = [];
  const fields = config.fields ?? {};
  const kinds: RuleKind[] = ["crawlable", "searchable", "filterable"];
  for (const kind of kinds) {
    for (const list of ["allow", "deny"] as const) {
      (fields[kind]?.[list] ?? []).forEach((name, i) => {
        if (pathSegments(name).length === 0) {
          issues.push({ path: `configuration.fields.${kind}.${list}.${i}`, message: `malformed field path "${name}" (dots separate nested keys)` });
        }
      });
    }
  }
  for (const name of [...Object.keys(fields.types ?? {}), ...Object.keys(fields.segment_delimiter ?? {})]) {
    if (pathSegments(name).length === 0) issues.push({ path: `configuration.fields`, message: `malformed field path "${name}" (dots separate nested keys)` });
  }
  if (issues.length > 0) return issues;
  const crawl = fieldRule(config, "crawlable");
  const crawled = (name: string) => ruleAdmits(crawl, name) || (crawl.allow ?? []).some((allowed) => allowed.startsWith(`${name}.`));
  for (const kind of ["searchable", "filterable"] as const) {
    (fields[kind]?.allow ?? []).forEach((name, i) => {
      if (!crawled(name)) {
        issues.push({ path: `configuration.fields.${kind}.allow.${i}`, message: `"${name}" is not crawlable: a field must be crawlable to be ${kind}` });
      }
    });
  }
  const rules = new FieldRules(config);
  for (const name of Object.keys(fields.types ?? {})) {
    if (!rules.admits("filterable", name)) {
      issues.push({ path: `configuration.fields.types.${name}`, message: `"${name}" has a type but is not filterable (check crawlable and filterable)` });
    }
  }
  return issues;
}

/** Whether the index searches images (CLIP): type `image`. */
export function isImageIndex(config: IndexConfiguration): boolean {
  return config.index_type.name === "image";
}

/** Whether the index is vector-only (no lexical part). */
export function isNeuralOnly(config: IndexConfiguration): boolean {
  return config.index_type.neural_only === true;
}
