/** Tables for people (cli-table3 + chalk). */
import Table from "cli-table3";
import type { IndexInfo, SearchPage, StoredObject } from "../../engine/index.js";
import { renderHighlight } from "./highlight.js";
import { chalk } from "./style.js";

/** Terminal width, or a comfortable default in a pipe. */
export function terminalWidth(): number {
  return process.stdout.columns && process.stdout.columns > 40 ? process.stdout.columns : 100;
}

/** Collapses white space and cuts to `max` characters with an ellipsis. */
export function snippet(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  return flat.slice(0, Math.max(1, max - 1)).trimEnd() + "…";
}

function newTable(head: string[], colWidths?: number[]): Table.Table {
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

/**
 * Search results: rank, id, score, the best highlight (or a snippet of the searchable text) with the
 * query's words emphasised, then the requested object fields.
 */
export function renderSearchTable(page: SearchPage, offset: number, extraFields: string[], query: string, width = terminalWidth()): string {
  const idWidth = Math.min(24, Math.max(4, ...page.hits.map((hit) => hit.id.length)) + 2);
  // Borders: one per column plus one. The text column keeps at least 24 characters; requested fields
  // share what is left (8 to 18 each), so the table fits the terminal unless it is very narrow.
  const borders = 5 + extraFields.length;
  const room = width - borders - 6 - idWidth - 8 - 24;
  const fieldWidth = extraFields.length === 0 ? 0 : Math.max(8, Math.min(18, Math.floor(room / extraFields.length)));
  const textWidth = Math.max(24, width - borders - 6 - idWidth - 8 - extraFields.length * fieldWidth);
  const withHighlights = page.hits.some((hit) => hit.highlights !== undefined);
  const table = newTable(["#", "id", "score", withHighlights ? "best highlight" : "text", ...extraFields], [6, idWidth, 8, textWidth, ...extraFields.map(() => fieldWidth)]);
  page.hits.forEach((hit, i) => {
    table.push([
      String(offset + i + 1),
      cell(hit.id, idWidth - 2),
      hit.score.toFixed(3),
      renderHighlight(hit.highlights?.[0]?.highlight.text ?? hit.text, query, textWidth - 2),
      ...extraFields.map((field) => cell(hit.object[field], fieldWidth - 2)),
    ]);
  });
  return table.toString() + "\n" + pageFooter(page) + "\n";
}

export function pageFooter(page: SearchPage): string {
  const { pages, page: current, next, statistics } = page.pagination;
  const total = `${statistics.total_calculation === "minimum" ? "≥ " : ""}${statistics.total} results`;
  const nextHint = next ? ` · next page: --offset ${next.offset} --limit ${next.limit}` : "";
  if (page.hits.length === 0) return chalk.dim(`No results on page ${current} (${total}).`);
  return chalk.dim(`Page ${current} of ${statistics.total_calculation === "minimum" ? "≥ " : ""}${pages} · ${total}${nextHint}`);
}

export function renderIndexTable(indexes: IndexInfo[]): string {
  if (indexes.length === 0) return "No indexes. Create one with `semsearch index create`.\n";
  const table = newTable(["id", "type", "search", "model", "state", "ready", "created"]);
  for (const index of indexes) {
    const total = Object.values(index.status).reduce((a, b) => a + b, 0);
    table.push([
      index.id,
      index.configuration.index_type.name,
      index.configuration.index_type.neural_only ? "neural" : "hybrid",
      index.model,
      index.state === "READY" ? chalk.green(index.state) : chalk.yellow(index.state),
      `${index.status.READY}/${total}`,
      index.created_at,
    ]);
  }
  return table.toString() + "\n";
}

export function renderObjectTable(objects: StoredObject[]): string {
  if (objects.length === 0) return "No objects.\n";
  const width = terminalWidth();
  const idWidth = Math.min(38, Math.max(4, ...objects.map((o) => o.id.length)) + 2);
  const table = newTable(["id", "updated", "object"], [idWidth, 26, Math.max(20, width - idWidth - 26 - 4)]);
  for (const object of objects) table.push([object.id, object.updated_at, cell(object.object, Math.max(18, width - idWidth - 34))]);
  return table.toString() + "\n";
}
