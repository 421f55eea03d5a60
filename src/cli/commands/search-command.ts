/** `semsearch search <index> <query>`: a table, the service's JSON, JSON Lines, or an interactive session. */
import { integerIn, UsageError, DEFAULT_LIMIT, MAX_RESULTS, MAX_LIMIT, ValidationError, type SearchPage, type SearchParams } from "../../engine/index.js";
import type { GlobalOptions } from "../options.js";
import { isStandardInput, readArgumentFile } from "../options.js";
import { withReader, type Reader } from "../reader.js";
import { listFormat, warn } from "../output.js";
import { formatJson, searchResponse, searchResult } from "../render/json.js";
import { renderSearchTable } from "../render/table.js";

export interface SearchOptions extends GlobalOptions {
  limit?: number;
  offset?: number;
  page?: number;
  objectFields?: string;
  resultFields?: string;
  resultsFields?: string;
  mode?: string;
  semanticRatio?: number;
  filter?: string;
  queryFile?: string;
  filterFile?: string;
  jsonl?: boolean;
  all?: boolean;
  /** true: --interactive, false: --no-interactive, undefined: decide by the terminal */
  interactive?: boolean;
}

export type OutputMode = "interactive" | "json" | "jsonl" | "table";

/**
 * How results are shown. `--json` and `--jsonl` print data; `--interactive` asks for a session;
 * otherwise a session opens when both stdin and stdout are terminals (and neither `--all` nor
 * `--no-interactive` is given), and a table is printed when not.
 */
export function outputMode(options: SearchOptions, tty: { stdin: boolean; stdout: boolean }): OutputMode {
  if (options.json && options.jsonl) throw new UsageError("CONFLICTING_OPTIONS", "Give --json or --jsonl, not both");
  if (options.interactive === true) {
    if (options.json || options.jsonl || options.all || options.format !== undefined) throw new UsageError("CONFLICTING_OPTIONS", "--interactive shows pages to a person: it cannot be combined with --json, --jsonl, --format or --all");
    if (!tty.stdin || !tty.stdout) throw new UsageError("NOT_A_TERMINAL", "--interactive needs a terminal on standard input and output");
    return "interactive";
  }
  if (options.jsonl) return "jsonl";
  if (options.json) return "json";
  // (a format asked for is printed, not paged through)
  const asked = options.format === "table" || options.format === "tsv";
  if (options.interactive === undefined && !options.all && !asked && tty.stdin && tty.stdout) return "interactive";
  return "table";
}

/** --page N is sugar for offset = limit × (N − 1). */
export function resolveOffset(options: SearchOptions): number | undefined {
  if (options.page === undefined) return options.offset;
  if (options.offset !== undefined) throw new UsageError("CONFLICTING_OPTIONS", "Give --page or --offset, not both");
  if (options.all) throw new UsageError("CONFLICTING_OPTIONS", "--all prints every result, in pages of its own: give --offset to start further down, not --page");
  const limit = options.limit ?? DEFAULT_LIMIT;
  // Results go up to MAX_RESULTS, so pages of `limit` go up to ceil(MAX_RESULTS / limit).
  integerIn("page", options.page, 1, 1, Number.isSafeInteger(limit) && limit > 0 ? Math.ceil(MAX_RESULTS / limit) : Number.MAX_SAFE_INTEGER);
  return limit * (options.page - 1);
}

/** A filter error with the filter shown and a caret under the column it points at. */
function withCaret(error: unknown, filter: string | undefined): unknown {
  const column = error instanceof ValidationError ? error.issues?.[0]?.column : undefined;
  if (!(error instanceof ValidationError) || column === undefined || filter === undefined || filter.includes("\n")) return error;
  const caret = `  ${filter}\n  ${" ".repeat(column - 1)}^`;
  return new ValidationError(error.code, error.message, { issues: error.issues, hint: error.hint ? `${caret}\n${error.hint}` : caret });
}

/**
 * Every page from `offset` on, following `next` as a client would (the service caps results at
 * 10,000); each page is handed to `onPage` as it arrives. Returns the last page.
 */
export async function followPages(searcher: Reader, indexId: string, params: SearchParams, onPage: (page: SearchPage, offset: number) => void): Promise<SearchPage> {
  let offset = params.offset ?? 0;
  let limit = params.limit;
  for (;;) {
    const page = await searcher.search(indexId, { ...params, offset, limit });
    onPage(page, offset);
    if (!page.pagination.next) return page;
    ({ offset, limit } = page.pagination.next);
  }
}

/**
 * The columns `--object-fields '*'` shows: the page's objects' top-level fields, in the order they
 * first appear (the table leaves out from the right those that do not fit the terminal).
 */
export function starFields(page: SearchPage): string[] {
  const fields = new Set<string>();
  for (const hit of page.hits) for (const key of Object.keys(hit.object)) if (key !== "id") fields.add(key);
  return [...fields];
}

/** The warning for a search of an index that is still building (results may be incomplete). */
export function buildingWarning(indexId: string, building: NonNullable<SearchPage["building"]>) {
  const { searchable, total } = building;
  return {
    code: "INDEX_BUILDING",
    message: `Index ${indexId} is still building: ${searchable.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} objects are searchable so far, so results may be incomplete. Wait for it with \`semsearch index status ${indexId} --wait\`.`,
  };
}

/** Largest query or filter file read (the engine then applies its own limits: 10,000 characters of query, 1,000 conditions). */
export const MAX_ARGUMENT_FILE_BYTES = 1024 * 1024;

/** Where the query and the filter come from: arguments, or files (`-`: standard input) for text too long for a command line. */
export function argumentSources(
  queryWords: string[],
  options: Pick<SearchOptions, "queryFile" | "filter" | "filterFile">,
  /** Whether a file names standard input: `-`, and (given by the caller) `/dev/stdin` and the like. */
  isStdin: (file: string) => boolean = (file) => file === "-",
): { query: string | null; filter: string | null } {
  const stdinQuery = queryWords.length === 1 && queryWords[0] === "-";
  if (options.queryFile !== undefined && queryWords.length > 0) throw new UsageError("CONFLICTING_OPTIONS", "Give the query as words or with --query-file, not both");
  if (options.queryFile === undefined && queryWords.length === 0) {
    throw new UsageError("MISSING_QUERY", "No query: give it as words, as - to read it from standard input, or with --query-file <file>");
  }
  if (options.filter !== undefined && options.filterFile !== undefined) throw new UsageError("CONFLICTING_OPTIONS", "Give --filter or --filter-file, not both");
  const queryFromStdin = stdinQuery || (options.queryFile !== undefined && isStdin(options.queryFile));
  if (queryFromStdin && options.filterFile !== undefined && isStdin(options.filterFile)) throw new UsageError("CONFLICTING_OPTIONS", "Only one of the query and the filter can be read from standard input");
  return { query: stdinQuery || options.queryFile !== undefined ? null : queryWords.join(" "), filter: options.filterFile !== undefined ? null : (options.filter ?? null) };
}

export async function searchCommand(indexId: string, queryWords: string[], options: SearchOptions): Promise<void> {
  const sources = argumentSources(queryWords, options, isStandardInput);
  const mode = outputMode(options, { stdin: process.stdin.isTTY === true, stdout: process.stdout.isTTY === true });
  const offset = resolveOffset(options);
  const query = sources.query ?? (await readArgumentFile(options.queryFile ?? "-", "--query-file", MAX_ARGUMENT_FILE_BYTES));
  const filter = sources.filter ?? (options.filterFile !== undefined ? await readArgumentFile(options.filterFile, "--filter-file", MAX_ARGUMENT_FILE_BYTES) : undefined);
  const extra = options.objectFields === undefined || options.objectFields === "*" ? [] : options.objectFields.split(",").map((f) => f.trim()).filter((f) => f && f !== "id");
  const params: SearchParams = {
    query,
    limit: options.limit ?? (options.all ? MAX_LIMIT : undefined),
    offset,
    // Tables show the object fields asked for; JSON defaults to the service's id-only object.
    objectFields: options.objectFields,
    resultFields: options.resultFields ?? options.resultsFields,
    mode: options.mode,
    semanticRatio: options.semanticRatio,
    filter,
    snippets: mode === "table" || mode === "interactive",
    fieldWarnings: true, // (said on stderr; a server's HTTP answers carry none)
  };
  const write = (text: string) => process.stdout.write(text);
  // (the object fields a table shows: those asked for, or with '*' the page's own)
  const columnsOf = (page: SearchPage) => (options.objectFields === "*" ? starFields(page) : extra);
  // A search of an index that is still building says so once, however many pages it prints.
  let warned = false;
  const said = new Set<string>();
  const noteBuilding = (page: SearchPage) => {
    if (page.building && !warned) warn(options, buildingWarning(indexId, page.building));
    warned ||= page.building !== undefined;
    // (a field no object has, in the filter or the object fields: once, however many pages)
    for (const warning of page.warnings ?? []) {
      // (a script that asks for highlights in the spec's shape asks for their order too: said to people only)
      if (warning.code === "HIGHLIGHTS_REORDERED" && (mode === "json" || mode === "jsonl")) continue;
      if (!said.has(warning.code)) warn(options, warning);
      said.add(warning.code);
    }
  };
  await withReader(options, async (searcher) => {
    searcher.prepareSearch(indexId);
    try {
      if (mode === "interactive") {
        const { interactiveSearch } = await import("../interactive.js");
        await interactiveSearch(searcher, indexId, { query, offset: offset ?? 0, limit: options.limit ?? DEFAULT_LIMIT }, params, extra);
      } else if (!options.all) {
        const page = await searcher.search(indexId, params);
        noteBuilding(page);
        if (mode === "jsonl") for (const hit of page.hits) write(`${JSON.stringify(searchResult(hit))}\n`);
        else if (mode === "json") write(formatJson(searchResponse(page), process.stdout.isTTY === true));
        else write(renderSearchTable(page, offset ?? 0, columnsOf(page), query, undefined, listFormat(options)));
      } else if (mode === "jsonl") {
        // streamed: each page's results as soon as it arrives
        await followPages(searcher, indexId, params, (page) => {
          noteBuilding(page);
          for (const hit of page.hits) write(`${JSON.stringify(searchResult(hit))}\n`);
        });
      } else {
        const hits: SearchPage["hits"] = [];
        const last = await followPages(searcher, indexId, params, (page) => {
          noteBuilding(page);
          hits.push(...page.hits);
        });
        const whole: SearchPage = { hits, pagination: { pages: hits.length > 0 ? 1 : 0, page: 1, statistics: last.pagination.statistics } };
        write(mode === "json" ? formatJson(searchResponse(whole), process.stdout.isTTY === true) : renderSearchTable(whole, offset ?? 0, columnsOf(whole), query, undefined, listFormat(options)));
      }
    } catch (error) {
      throw withCaret(error, filter);
    }
  });
}
