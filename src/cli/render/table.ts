/** Tables for people (cli-table3 + chalk). */
import Table from "cli-table3";
import type { IndexInfo, KeyInfo, SearchPage, StoredObject } from "../../engine/index.js";
import { highlightLabel, renderHighlight, wordEnd } from "./highlight.js";
import { chalk, printable } from "./style.js";
import { tsv } from "./tsv.js";

/** How lists print for people: boxed tables at a terminal, tab-separated values in a pipe (--format). */
export type ListFormat = "table" | "tsv";

/** Terminal width, or a comfortable default in a pipe. */
export function terminalWidth(): number {
  const columns = process.stdout.columns;
  return process.stdout.isTTY && columns !== undefined && columns > 0 ? columns : 100;
}

/** Collapses white space and cuts to `max` characters with an ellipsis. */
export function snippet(text: string, max: number): string {
  // (control characters shown as escapes: a stored value must not drive the terminal)
  const flat = printable(text.replace(/\s+/g, " ").trim());
  if (flat.length <= max) return flat;
  return flat.slice(0, wordEnd(flat, 0, Math.max(1, max - 1), max)).trimEnd() + "…";
}

export function newTable(head: string[], colWidths?: number[]): Table.Table {
  return new Table({
    head: head.map((title) => chalk.bold(title)),
    style: { head: [], border: [] },
    chars: { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" },
    wordWrap: false,
    ...(colWidths ? { colWidths } : {}),
  });
}

function cell(value: unknown, max: number): string {
  if (value === undefined) return "";
  return snippet(typeof value === "string" ? value : JSON.stringify(value), max);
}

interface SearchColumns {
  rank: number;
  id: number;
  score: number;
  text: number;
  /** One width for every field shown; fields that do not fit at all are left out from the right. */
  field: number;
  fields: number;
}

/** Order in which columns give way when the comfortable widths do not fit: [column, smallest width]. */
const SHRINK_STEPS: [keyof Pick<SearchColumns, "id" | "text" | "field">, number][] = [
  ["id", 12],
  ["text", 16],
  ["field", 6],
  ["id", 6],
];

/**
 * Column widths (cell padding included) for a search table `width` characters wide, borders counted.
 * Comfortable first: the id as long as the longest (up to 22 characters), the text at least 24, each
 * field 8 to 18. When that is too wide, the id, the text and the fields give way in turn
 * (SHRINK_STEPS), then fields are left out from the right, then the text shrinks to 10; so the table
 * fits any terminal of 40 columns or more.
 */
export function searchColumns(width: number, widest: { rank: number; id: number; score: number }, fieldCount: number): SearchColumns {
  const rank = Math.max(1, widest.rank) + 2;
  const score = Math.max(5, widest.score) + 2;
  const sizes: SearchColumns = { rank, id: Math.min(24, Math.max(2, widest.id) + 2), score, text: 24, field: 0, fields: fieldCount };
  // one border per column plus one
  const fixed = () => sizes.fields + 5 + sizes.rank + sizes.score + sizes.id;
  if (fieldCount > 0) sizes.field = Math.max(8, Math.min(18, Math.floor((width - fixed() - 24) / fieldCount)));
  const over = () => fixed() + sizes.text + sizes.fields * sizes.field - width;
  for (const [column, smallest] of SHRINK_STEPS) {
    const per = column === "field" ? sizes.fields : 1;
    if (over() <= 0) break;
    if (per > 0) sizes[column] = Math.max(Math.min(sizes[column], smallest), sizes[column] - Math.ceil(over() / per));
  }
  while (over() > 0 && sizes.fields > 0) sizes.fields -= 1;
  sizes.text = Math.max(Math.min(sizes.text, 10), width - fixed() - sizes.fields * sizes.field);
  return sizes;
}

/**
 * Search results: rank, id, score, the best highlight (or a snippet of the searchable text) with the
 * query's words emphasised, then the requested object fields, in at most `width` columns (see
 * `searchColumns`).
 */
export function renderSearchTable(page: SearchPage, offset: number, extraFields: string[], query: string, width = terminalWidth(), format: ListFormat = "table"): string {
  const valueOf = (hit: SearchPage["hits"][number], field: string) => (Object.hasOwn(hit.object, field) ? hit.object[field] : undefined);
  if (format === "tsv") {
    const rows = page.hits.map((hit, i) => [offset + i + 1, hit.id, hit.score.toFixed(3), highlightLabel(hit), ...extraFields.map((field) => valueOf(hit, field))]);
    const label = page.hits.some((hit) => hit.highlights !== undefined) ? "highlight" : page.hits.some((hit) => hit.image !== undefined) ? "image" : "text";
    return tsv(["rank", "id", "score", label, ...extraFields], rows);
  }
  if (page.hits.length === 0) return pageFooter(page, width) + "\n"; // (no empty table)
  const scores = page.hits.map((hit) => hit.score.toFixed(3));
  const widest = { rank: String(offset + page.hits.length).length, id: Math.max(0, ...page.hits.map((hit) => hit.id.length)), score: Math.max(0, ...scores.map((s) => s.length)) };
  const columns = searchColumns(width, widest, extraFields.length);
  const fields = extraFields.slice(0, columns.fields);
  // Each field as wide as its content needs, within the fields' share (and what the text can spare
  // above 40 characters); what the fields leave goes to the text.
  const needed = fields.map((field) => Math.min(40, Math.max(field.length, ...page.hits.map((hit) => cell(valueOf(hit, field), 1000).length)) + 2));
  const budget = columns.fields * columns.field;
  const spare = Math.max(0, columns.text - 40);
  const widths = shareWidths(budget + spare, needed);
  const text = columns.text + budget - widths.reduce((sum, w) => sum + w, 0);
  const withHighlights = page.hits.some((hit) => hit.highlights !== undefined);
  const withImages = page.hits.some((hit) => hit.image !== undefined);
  const table = newTable(["#", "id", "score", withHighlights ? "best highlight" : withImages ? "best image" : "text", ...fields], [columns.rank, columns.id, columns.score, text, ...widths]);
  page.hits.forEach((hit, i) => {
    table.push([
      String(offset + i + 1),
      cell(hit.id, columns.id - 2),
      scores[i] as string,
      renderHighlight(highlightLabel(hit), query, text - 2),
      ...fields.map((field, f) => cell(valueOf(hit, field), (widths[f] as number) - 2)),
    ]);
  });
  return table.toString() + "\n" + pageFooter(page, width) + "\n";
}

/**
 * Widths for columns that need `needed` each, sharing `total`: each what it needs when all fit, else
 * the narrow ones what they need and the rest equal shares of what is left (never below 6, the
 * narrowest a column is given).
 */
export function shareWidths(total: number, needed: readonly number[]): number[] {
  const out = needed.map((n) => Math.max(6, n));
  if (out.reduce((sum, w) => sum + w, 0) <= total) return out;
  const order = out.map((_, i) => i).sort((a, b) => (out[a] as number) - (out[b] as number));
  let left = total;
  order.forEach((i, k) => {
    const share = Math.max(6, Math.floor(left / (order.length - k)));
    out[i] = Math.min(out[i] as number, share);
    left -= out[i] as number;
  });
  return out;
}

/** The line under a table; the next-page hint moves to a line of its own when both do not fit `width`. */
export function pageFooter(page: SearchPage, width = terminalWidth()): string {
  const { pages, page: current, next, statistics } = page.pagination;
  const total = `${statistics.total_calculation === "minimum" ? "≥ " : ""}${statistics.total.toLocaleString("en-US")} result${statistics.total === 1 ? "" : "s"}`;
  if (page.hits.length === 0) {
    if (statistics.total === 0) return chalk.dim("No results.");
    // past the last page: say which it is
    return chalk.dim(`No results on page ${current}: the last page is ${pages.toLocaleString("en-US")} (${total}).`);
  }
  const summary = `Page ${current} of ${statistics.total_calculation === "minimum" ? "≥ " : ""}${pages} · ${total}`;
  if (!next) return chalk.dim(summary);
  const hint = `next page: --offset ${next.offset} --limit ${next.limit}`;
  return chalk.dim(summary.length + 3 + hint.length <= width ? `${summary} · ${hint}` : `${summary}\n${hint}`);
}

/**
 * An index's objects per state, as `index status` prints them (`UPLOADED n · PROCESSING n · READY n ·
 * ERROR n`); `brief` leaves out the states with none (a table's cell).
 */
export function statusCounts(status: IndexInfo["status"], brief = false): string {
  const states = (["UPLOADED", "PROCESSING", "READY", "ERROR"] as const).filter((state) => !brief || status[state] > 0);
  return states.length === 0 ? "none" : states.map((state) => `${state} ${status[state].toLocaleString("en-US")}`).join(" · ");
}

export function renderIndexTable(indexes: IndexInfo[], project?: string, format: ListFormat = "table"): string {
  if (format === "tsv") {
    const rows = indexes.map((index) => [index.id, index.name ?? "", index.configuration.index_type.name, index.configuration.index_type.neural_only ? "neural" : "hybrid", index.model, index.state, index.status.UPLOADED, index.status.PROCESSING, index.status.READY, index.status.ERROR, index.created_at]);
    return tsv(["id", "name", "type", "search", "model", "state", "uploaded", "processing", "ready", "error", "created"], rows);
  }
  if (indexes.length === 0) return `No indexes${project ? ` in ${project}` : ""}. Create one with \`semsearch index create\`.\n`;
  const named = indexes.some((index) => index.name !== undefined);
  const table = newTable(["id", ...(named ? ["name"] : []), "type", "search", "model", "state", "objects", "created"]);
  for (const index of indexes) {
    table.push([
      index.id,
      ...(named ? [index.name ?? ""] : []),
      index.configuration.index_type.name,
      index.configuration.index_type.neural_only ? "neural" : "hybrid",
      index.model,
      index.state === "READY" ? chalk.green(index.state) : chalk.yellow(index.state),
      statusCounts(index.status, true),
      index.created_at,
    ]);
  }
  return table.toString() + "\n";
}

export function renderObjectTable(objects: StoredObject[], format: ListFormat = "table"): string {
  if (format === "tsv") return tsv(["id", "updated", "object"], objects.map((object) => [object.id, object.updated_at, object.object]));
  if (objects.length === 0) return "No objects.\n";
  const width = terminalWidth();
  const idWidth = Math.min(38, Math.max(4, ...objects.map((o) => o.id.length)) + 2);
  const table = newTable(["id", "updated", "object"], [idWidth, 26, Math.max(20, width - idWidth - 26 - 4)]);
  for (const object of objects) table.push([printable(object.id), object.updated_at, cell(object.object, Math.max(18, width - idWidth - 34))]);
  return table.toString() + "\n";
}

export function renderKeyTable(keys: KeyInfo[], format: ListFormat = "table"): string {
  if (format === "tsv") return tsv(["id", "name", "scope", "created", "revoked"], keys.map((key) => [key.id, key.name ?? "", key.read_only ? "read-only" : "read-write", key.created_at, key.revoked_at ?? ""]));
  if (keys.length === 0) return "No keys. Create one with `semsearch keys create`.\n";
  const table = newTable(["id", "name", "scope", "created", "revoked"]);
  for (const key of keys) {
    table.push([key.id, snippet(key.name ?? "", 40), key.read_only ? "read-only" : "read-write", key.created_at, key.revoked_at ? chalk.red(key.revoked_at) : ""]);
  }
  return table.toString() + "\n";
}
