/**
 * Objects from CSV and TSV (`objects add data.csv`, `--input-format csv`): one object per row, the
 * header row's names as field names (RFC 4180: quoted fields, doubled quotes, line breaks inside
 * quotes, a byte order mark; csv-parse reads it, loaded only for such inputs). Values stay text: a
 * filterable field's declared type reads "42" as an int and "true" as a bool, as it does in JSON. An
 * empty cell is no field at all (a spreadsheet's blank is a missing value, not an empty text).
 *
 * The file is read whole (a row may span lines). A malformed row, a header with an empty or repeated
 * name, or a row of another length than the header is a validation error naming `file:line`, and
 * nothing of the add is written.
 */
import { setOwn } from "../fields.js";
import { invalid, type ParsedObject } from "./parse.js";
import type { JsonObject } from "../types.js";

export type TableFormat = "csv" | "tsv";

/** The rows of a CSV or TSV text as objects, each with the `source:line` its row starts on. */
export async function csvObjects(text: string, source: string, format: TableFormat): Promise<ParsedObject[]> {
  const { parse } = await import("csv-parse/sync");
  let header: string[] = [];
  let records: { record: string[]; raw: string; info: { lines: number } }[];
  try {
    // (CRLF read as LF, in values too: csv-parse counts a CRLF inside quotes as two lines, which put
    // every later row's line number off by one)
    records = parse(text.replaceAll("\r\n", "\n"), { bom: true, delimiter: format === "tsv" ? "\t" : ",", info: true, raw: true, skip_empty_lines: true, relax_column_count: true }) as unknown as typeof records;
  } catch (error) {
    const { lines: at, code } = error as { lines?: number; code?: string };
    throw invalid(at === undefined ? source : `${source}:${at}`, `not valid ${format.toUpperCase()}: ${REASONS[code ?? ""] ?? cleanMessage((error as Error).message)}`);
  }
  const out: ParsedObject[] = [];
  records.forEach(({ record, raw, info }, i) => {
    // (the line a row starts on: the line it ends on, less the line breaks inside it; csv-parse's raw
    // text may begin with the blank lines it skipped and end with the row's own line break)
    const inside = raw.replace(/^[\r\n]+/, "").replace(/\r?\n$/, "");
    const where = `${source}:${info.lines - (inside.match(/\n/g)?.length ?? 0)}`;
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
