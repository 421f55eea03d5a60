/** `semsearch search <index> <query>`. */
import { UsageError, DEFAULT_LIMIT, ValidationError } from "../../engine/index.js";
import { withEngine, type GlobalOptions } from "../options.js";
import { printResult } from "../output.js";
import { searchResponse } from "../render/json.js";
import { renderSearchTable } from "../render/table.js";

export interface SearchOptions extends GlobalOptions {
  limit?: number;
  offset?: number;
  page?: number;
  objectFields?: string;
  resultFields?: string;
  resultsFields?: string;
  mode?: string;
  filter?: string;
}

/** A filter error with the filter shown and a caret under the column it points at. */
function withCaret(error: unknown, filter: string | undefined): unknown {
  const column = error instanceof ValidationError ? error.issues?.[0]?.column : undefined;
  if (!(error instanceof ValidationError) || column === undefined || filter === undefined || filter.includes("\n")) return error;
  const caret = `  ${filter}\n  ${" ".repeat(column - 1)}^`;
  return new ValidationError(error.code, error.message, { issues: error.issues, hint: error.hint ? `${caret}\n${error.hint}` : caret });
}

/** --page N is sugar for offset = limit × (N − 1). */
export function resolveOffset(options: SearchOptions): number | undefined {
  if (options.page === undefined) return options.offset;
  if (options.offset !== undefined) throw new UsageError("CONFLICTING_OPTIONS", "Give --page or --offset, not both");
  if (options.page < 1) throw new UsageError("INVALID_PAGE", "--page starts at 1");
  return (options.limit ?? DEFAULT_LIMIT) * (options.page - 1);
}

export async function searchCommand(indexId: string, queryWords: string[], options: SearchOptions): Promise<void> {
  const offset = resolveOffset(options);
  const query = queryWords.join(" ");
  await withEngine(options, async (engine) => {
    const page = await engine
      .search(indexId, {
      query,
      limit: options.limit,
      offset,
      // Tables show the object fields asked for; JSON defaults to the service's id-only object.
      objectFields: options.objectFields,
      resultFields: options.resultFields ?? options.resultsFields,
      mode: options.mode,
      filter: options.filter,
    })
      .catch((error: unknown) => {
        throw withCaret(error, options.filter);
      });
    const extra = options.objectFields === undefined || options.objectFields === "*" ? [] : options.objectFields.split(",").map((f) => f.trim()).filter((f) => f && f !== "id");
    printResult(options, searchResponse(page), () => renderSearchTable(page, offset ?? 0, extra, query));
  });
}
