/**
 * Objects from CSV and TSV (`objects add data.csv`, `--input-format csv`): one object per row, the
 * header row's names as field names. CSV is RFC 4180 (quoted fields, doubled quotes, line breaks
 * inside quotes, a byte order mark; csv-parse reads it, loaded only for such inputs). TSV is IANA's
 * `text/tab-separated-values`: a row a line, fields split at tabs, no quoting and no escapes (a field
 * cannot hold a tab or a line break), so a `"` is a character like any other. Values stay text: a
 * filterable field's declared type reads "42" as an int and "true" as a bool, as it does in JSON. An
 * empty cell is no field at all (a spreadsheet's blank is a missing value, not an empty text).
 *
 * The file is read whole (a CSV row may span lines). A malformed row, a header with an empty or
 * repeated name, or a row of another length than the header is a validation error naming
 * `file:line`, and nothing of the add is written.
 */
import { setOwn } from "../fields.js";
import { invalid, type ParsedObject } from "./parse.js";
import type { JsonObject } from "../types.js";

export type TableFormat = "csv" | "tsv";

/** A row of a table and the line it starts on. */
interface Row {
  record: string[];
  line: number;
}

/** The rows of a CSV or TSV text as objects, each with the `source:line` its row starts on. */
export async function csvObjects(text: string, source: string, format: TableFormat): Promise<ParsedObject[]> {
  const rows = format === "tsv" ? tsvRows(text) : await csvRows(text, source);
  const out: ParsedObject[] = [];
  let header: string[] = [];
  rows.forEach(({ record, line }, i) => {
    const where = `${source}:${line}`;
    if (i === 0) {
      header = checkedHeader(record, where);
      return;
    }
    if (record.length !== header.length) throw invalid(where, `the row has ${record.length} field${record.length === 1 ? "" : "s"}, the header ${header.length}`);
    const object: JsonObject = {};
    record.forEach((value, column) => {
      if (value !== "") setOwn(object, header[column] as string, value);
    });
    out.push({ object, where });
  });
  return out;
}

/**
 * TSV's rows: lines, ended by LF, CRLF or a lone CR (as a classic Mac program writes them; a field
 * holds no line break of any kind), empty ones skipped, a byte order mark at the start dropped, split
 * at tabs.
 */
function tsvRows(text: string): Row[] {
  const rows: Row[] = [];
  text
    .replace(/^\uFEFF/, "")
    .split(/\r\n|\r|\n/)
    .forEach((line, i) => {
      if (line !== "") rows.push({ record: line.split("\t"), line: i + 1 });
    });
  return rows;
}

/** CSV's rows, by csv-parse. */
async function csvRows(text: string, source: string): Promise<Row[]> {
  const { parse } = await import("csv-parse/sync");
  let records: { record: string[]; raw: string; info: { lines: number } }[];
  try {
    // (CRLF read as LF, in values too: csv-parse counts a CRLF inside quotes as two lines, which put
    // every later row's line number off by one)
    records = parse(text.replaceAll("\r\n", "\n"), { bom: true, delimiter: ",", info: true, raw: true, skip_empty_lines: true, relax_column_count: true }) as unknown as typeof records;
  } catch (error) {
    const { lines: at, code } = error as { lines?: number; code?: string };
    throw invalid(at === undefined ? source : `${source}:${at}`, `not valid CSV: ${REASONS[code ?? ""] ?? cleanMessage((error as Error).message)}`);
  }
  // (the line a row starts on: the line it ends on, less the line breaks inside it; csv-parse's raw
  // text may begin with the blank lines it skipped and end with the row's own line break)
  return records.map(({ record, raw, info }) => {
    const inside = raw.replace(/^[\r\n]+/, "").replace(/\r?\n$/, "");
    return { record, line: info.lines - (inside.match(/\n/g)?.length ?? 0) };
  });
}

/** The header's names: none empty, none repeated. */
function checkedHeader(names: string[], where: string): string[] {
  const seen = new Set<string>();
  names.forEach((name, column) => {
    if (name.trim() === "") throw invalid(where, `column ${column + 1} of the header has no name`);
    if (seen.has(name)) throw invalid(where, `the header names "${name}" twice (columns must have distinct names)`);
    seen.add(name);
  });
  return names;
}

/** csv-parse's errors a person meets, said plainly. */
const REASONS: Record<string, string> = {
  CSV_QUOTE_NOT_CLOSED: "a quoted field is never closed (the file ends inside quotes)",
  CSV_INVALID_CLOSING_QUOTE: 'a quote ends a field but other characters follow it (inside a quoted field, write a quote as "")',
  INVALID_OPENING_QUOTE: "a quote starts in the middle of an unquoted field (quote the whole field)",
};

/** csv-parse's message without its option dump ("Invalid Record Length: expect 2, got 3 on line 4"). */
function cleanMessage(message: string): string {
  return message.replace(/^[A-Za-z ]+:\s*/, "").replace(/\s+$/, "");
}
