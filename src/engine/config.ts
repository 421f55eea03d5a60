/**
 * Index configuration: the spec's `{"configuration": {...}}` body, parsed,
 * validated and normalised. Pure: no fs, no clock, no model.
 */
import * as v from "valibot";
import { NotFoundError, ValidationError, type ErrorIssue } from "./errors.js";

/** Field types a filterable field can be declared as (`configuration.fields.types`). */
export const FIELD_TYPES = ["string", "int", "float", "bool", "datetime"] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** Index types of the service. */
export const INDEX_TYPES = ["text", "image"] as const;
export type IndexTypeName = (typeof INDEX_TYPES)[number];

const FieldList = v.array(v.pipe(v.string(), v.minLength(1, "a field name cannot be empty")));
const AllowDeny = v.strictObject({ allow: v.optional(FieldList), deny: v.optional(FieldList) });

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
      types: v.optional(v.record(v.string(), v.string())),
      segment_delimiter: v.optional(v.record(v.string(), v.string())),
    }),
  ),
  /** semsearch extension: the embedding model of this index (default: the bundled one). */
  model: v.optional(v.pipe(v.string(), v.minLength(1))),
});

const CreateIndexBodySchema = v.strictObject({ configuration: ConfigurationSchema });

export type IndexConfiguration = v.InferOutput<typeof ConfigurationSchema>;
export interface CreateIndexBody {
  configuration: IndexConfiguration;
}

/** The allow/deny pair of one field rule after normalisation: `allow: null` means every field. */
export interface FieldRule {
  allow: string[] | null;
  deny: string[];
}

function describeIssue(issue: v.BaseIssue<unknown>): ErrorIssue {
  const keys = (issue.path ?? []).map((item) => String(item.key));
  if (issue.type === "strict_object" && issue.expected === "never" && keys.length > 0) {
    const unknown = keys.pop() as string;
    return { path: keys.join(".") || "(body)", message: `unknown key "${unknown}"` };
  }
  const path = keys.join(".") || "(body)";
  if (issue.received === "undefined") return { path, message: "required, but missing" };
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
  for (const [field, type] of Object.entries(config.fields?.types ?? {})) {
    if (!(FIELD_TYPES as readonly string[]).includes(type)) {
      issues.push({
        path: `configuration.fields.types.${field}`,
        message: `unsupported field type "${type}". Supported: ${FIELD_TYPES.join(", ")}`,
      });
    }
  }
  for (const [field, source] of Object.entries(config.fields?.segment_delimiter ?? {})) {
    const path = `configuration.fields.segment_delimiter.${field}`;
    let regex: RegExp;
    try {
      regex = new RegExp(source, "u");
    } catch (error) {
      issues.push({ path, message: `invalid regular expression /${source}/: ${(error as Error).message}` });
      continue;
    }
    if (regex.test("")) issues.push({ path, message: `regular expression /${source}/ matches the empty string` });
  }
  return issues;
}

/** The normalised allow/deny rule for `crawlable`, `searchable` or `filterable`. */
export function fieldRule(config: IndexConfiguration, kind: "crawlable" | "searchable" | "filterable"): FieldRule {
  const rule = config.fields?.[kind];
  return { allow: rule?.allow ?? null, deny: rule?.deny ?? [] };
}

/** Whether a top-level field passes one rule: deny always wins; an omitted allow admits every field. */
export function ruleAdmits(rule: FieldRule, field: string): boolean {
  if (rule.deny.includes(field)) return false;
  return rule.allow === null || rule.allow.includes(field);
}

/** Whether a field contributes to relevance: it must be both crawlable and searchable. */
export function isSearchableField(config: IndexConfiguration, field: string): boolean {
  return ruleAdmits(fieldRule(config, "crawlable"), field) && ruleAdmits(fieldRule(config, "searchable"), field);
}

/** Whether the index is vector-only (no lexical part). */
export function isNeuralOnly(config: IndexConfiguration): boolean {
  return config.index_type.neural_only === true;
}
