/** Building the create-index request body from `index create` flags. Pure. */
import { UsageError } from "../engine/index.js";

export interface IndexCreateFlags {
  type?: string;
  highlights?: boolean;
  neuralOnly?: boolean;
  model?: string;
  modelDtype?: string;
  crawlable?: string[];
  crawlableDeny?: string[];
  searchable?: string[];
  searchableDeny?: string[];
  filterable?: string[];
  filterableDeny?: string[];
  fieldType?: Record<string, string>;
  segmentDelimiter?: Record<string, string>;
  imageFields?: string[];
}

const BODY_FLAGS: (keyof IndexCreateFlags)[] = [
  "type",
  "highlights",
  "neuralOnly",
  "model",
  "modelDtype",
  "crawlable",
  "crawlableDeny",
  "searchable",
  "searchableDeny",
  "filterable",
  "filterableDeny",
  "fieldType",
  "segmentDelimiter",
  "imageFields",
];

/** Whether any flag that shapes the body was given (they cannot be mixed with --config). */
export function hasBodyFlags(flags: IndexCreateFlags): boolean {
  return BODY_FLAGS.some((flag) => flags[flag] !== undefined);
}

function allowDeny(allow: string[] | undefined, deny: string[] | undefined) {
  if (allow === undefined && deny === undefined) return undefined;
  return { ...(allow ? { allow } : {}), ...(deny ? { deny } : {}) };
}

/** The `{"configuration": {...}}` body the flags describe; the engine validates it. */
export function indexBodyFromFlags(flags: IndexCreateFlags): { configuration: Record<string, unknown> } {
  const indexType: Record<string, unknown> = { name: flags.type ?? "text" };
  if (flags.highlights) indexType.highlights = { text: true };
  if (flags.neuralOnly) indexType.neural_only = true;
  const fields: Record<string, unknown> = {};
  const rules = {
    crawlable: allowDeny(flags.crawlable, flags.crawlableDeny),
    searchable: allowDeny(flags.searchable, flags.searchableDeny),
    filterable: allowDeny(flags.filterable, flags.filterableDeny),
  };
  for (const [name, rule] of Object.entries(rules)) if (rule) fields[name] = rule;
  if (flags.fieldType) fields.types = flags.fieldType;
  if (flags.segmentDelimiter) fields.segment_delimiter = flags.segmentDelimiter;
  if (flags.imageFields) fields.images = flags.imageFields;
  const configuration: Record<string, unknown> = { index_type: indexType };
  if (Object.keys(fields).length > 0) configuration.fields = fields;
  if (flags.model !== undefined) configuration.model = flags.model;
  if (flags.modelDtype !== undefined) configuration.model_dtype = flags.modelDtype;
  return { configuration };
}

export function checkNoMix(flags: IndexCreateFlags, config: string | undefined): void {
  if (config !== undefined && hasBodyFlags(flags)) {
    throw new UsageError("CONFLICTING_OPTIONS", "Give the configuration either with --config or with flags, not both");
  }
}
