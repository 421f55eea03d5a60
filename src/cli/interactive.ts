/**
 * The interactive page-through of `semsearch search`: shows a page as a table, then a menu answered by
 * one key (next, previous, go to page, refresh, results per page, open a result, new query, quit) whose
 * entries stay in the same order on every page. Esc or Ctrl+C at the menu leaves (the prompts restore
 * the terminal); in a question asked from the menu, they go back to the menu.
 */
import { displayReference, MAX_LIMIT, MAX_RESULTS, type SearchHit, type SearchPage, type SearchParams } from "../engine/index.js";
import type { Reader } from "./reader.js";
import { abort, ask, begin, choose, chooseKey, end, say, type Choice } from "./prompts.js";
import { highlightLabel, renderHighlight } from "./render/highlight.js";
import { chalk } from "./render/style.js";
import { inlineImage, inlineProtocol } from "./render/inline-image.js";
import { pageFooter, renderSearchTable, snippet, terminalWidth } from "./render/table.js";

export interface Session {
  query: string;
  offset: number;
  limit: number;
}

/** The menu's keys: each entry is chosen by typing its key. */
export type MenuKey = "n" | "p" | "g" | "r" | "s" | "o" | "/" | "q";

/** The header above a page: query (cut to fit `width`), page X of Y (≥ when the total is a minimum) and the total. */
export function pageHeader(query: string, page: SearchPage, width = terminalWidth()): string {
  const { pages, page: current, statistics } = page.pagination;
  const min = statistics.total_calculation === "minimum" ? "≥ " : "";
  const rest = ` · page ${current} of ${min}${Math.max(pages, 1)} · ${min}${statistics.total.toLocaleString("en-US")} result${statistics.total === 1 ? "" : "s"}`;
  const header = `${chalk.bold(`“${snippet(query, Math.max(10, width - rest.length - 2))}”`)}${rest}`;
  if (!page.building) return header;
  // The index is still taking objects in: say so, and how to see more as it does.
  const { searchable, total } = page.building;
  return `${header}\n${chalk.yellow(snippet(`still building: ${searchable} of ${total} objects searchable · r refreshes`, width))}`;
}

/**
 * The menu under a page: the same entries in the same order on every page; those that do not apply
 * here (previous on the first page, next on the last, open on an empty page) are disabled, not removed.
 * Enter takes the first entry, next page.
 */
export function menuEntries(page: SearchPage, session: Session): Choice<MenuKey>[] {
  const last = !page.pagination.next;
  const first = session.offset === 0;
  return [
    { value: "n", label: "Next page", hint: last ? "this is the last page" : "or Enter", disabled: last },
    { value: "p", label: "Previous page", ...(first ? { hint: "this is the first page", disabled: true } : {}) },
    { value: "g", label: "Go to page…" },
    { value: "r", label: "Refresh" },
    { value: "s", label: "Results per page…", hint: String(session.limit) },
    { value: "o", label: "Open a result…", disabled: page.hits.length === 0 },
    { value: "/", label: "New query…" },
    { value: "q", label: "Quit" },
  ];
}

function integerIn(min: number, max: number) {
  return (value: string) => {
    const n = Number(value.trim());
    return Number.isInteger(n) && n >= min && n <= max ? undefined : `a whole number from ${min} to ${max}`;
  };
}

/** One result in full: every field of the object, pretty-printed, and its highlights. */
export function renderHit(hit: SearchHit, rank: number, query: string, width = terminalWidth()): string {
  const lines = [chalk.bold(`#${rank} ${hit.id}`) + chalk.dim(` · score ${hit.score.toFixed(3)}`), JSON.stringify(hit.object, null, 2)];
  for (const h of hit.highlights ?? []) {
    if (!("highlight_type" in h)) {
      lines.push(`${chalk.dim("image")} ${snippet(displayReference(h.media_identifier), Math.max(20, width - 6))}`);
      continue;
    }
    const where = `${h.references[0]?.source ?? ""} [${h.references[0]?.position.start_char}–${h.references[0]?.position.end_char}]`;
    lines.push(`${chalk.dim(where)} ${renderHighlight(h.highlight.text, query, Math.max(20, width - where.length - 1))}`);
  }
  return `${lines.join("\n")}\n`;
}

/**
 * A page for the session: the header and the table, without the table's footer (the header already
 * says which page this is, and the footer's next-page flags are for the command line, not this menu).
 */
function renderPage(session: Session, page: SearchPage, extraFields: string[]): string {
  if (page.hits.length === 0) return `\n${pageHeader(session.query, page)}\n${chalk.dim("No results on this page.")}\n`;
  const width = terminalWidth();
  const table = renderSearchTable(page, session.offset, extraFields, session.query, width);
  const footer = `${pageFooter(page, width)}\n`;
  return `\n${pageHeader(session.query, page)}\n${table.endsWith(footer) ? table.slice(0, -footer.length) : table}`;
}

/** Asks what a menu entry needs and updates the session; false when the person went back (Esc). */
async function answer(key: "g" | "s" | "/", session: Session, page: SearchPage): Promise<boolean> {
  if (key === "g") {
    const last = page.pagination.statistics.total_calculation === "exact" ? Math.max(page.pagination.pages, 1) : Math.ceil(MAX_RESULTS / session.limit);
    const value = await ask(`Page (1–${last})`, { placeholder: String(Math.min(page.pagination.page + 1, last)), validate: integerIn(1, last) });
    if (value === null) return false;
    session.offset = Math.min((Number(value) - 1) * session.limit, MAX_RESULTS - 1);
  } else if (key === "s") {
    const value = await ask(`Results per page (1–${MAX_LIMIT})`, { placeholder: String(session.limit), validate: integerIn(1, MAX_LIMIT) });
    if (value === null) return false;
    session.limit = Number(value);
    session.offset = Math.floor(session.offset / session.limit) * session.limit;
  } else {
    const value = await ask("New query", { placeholder: session.query, validate: (text) => (text.trim() === "" ? "type a query" : undefined) });
    if (value === null) return false;
    session.query = value.trim();
    session.offset = 0;
  }
  return true;
}

/** A thumbnail of a result's best image, in terminals that show inline images (never in pipes). */
async function thumbnail(searcher: Reader, hit: SearchHit): Promise<string> {
  const protocol = process.stdout.isTTY ? inlineProtocol(process.env) : null;
  const best = hit.highlights?.find((h) => !("highlight_type" in h));
  if (protocol === null || !best || "highlight_type" in best) return "";
  const png = await searcher.imageThumbnail(hit.id, best.media_identifier).catch(() => null);
  return png ? inlineImage(png, protocol, Math.min(32, Math.max(8, Math.floor(terminalWidth() / 3)))) : "";
}

/** Asks which result to open and shows it in full (with a thumbnail of its best image, where the terminal can); Esc goes back. */
async function openResult(searcher: Reader, session: Session, page: SearchPage): Promise<void> {
  const width = terminalWidth();
  const picked = await choose(
    "Which result?",
    page.hits.map((hit, i) => {
      const label = `${session.offset + i + 1}. ${hit.id}`;
      return { value: String(i), label, hint: snippet(highlightLabel(hit), Math.max(10, width - label.length - 20)) };
    }),
  );
  if (picked === null) return;
  const hit = page.hits[Number(picked)] as SearchHit;
  // The text first: the thumbnail may take a moment (an image fetched over HTTP, at most a few seconds).
  process.stdout.write(`\n${renderHit(hit, session.offset + Number(picked) + 1, session.query, width)}`);
  process.stdout.write(await thumbnail(searcher, hit));
}

/** Does what a menu key asks; true when the page is to be fetched again and shown. */
async function act(searcher: Reader, key: Exclude<MenuKey, "q">, session: Session, page: SearchPage): Promise<boolean> {
  switch (key) {
    case "n":
      // Enter on the last page: clack shows "Next page" as the answer, so say why nothing moves
      if (!page.pagination.next) say("This is the last page.");
      else session.offset = page.pagination.next.offset;
      return page.pagination.next !== undefined;
    case "p":
      session.offset = Math.max(0, session.offset - session.limit);
      return true;
    case "r":
      return true;
    case "o":
      await openResult(searcher, session, page);
      return false; // the same page: its menu again, without reprinting the table
    default:
      return answer(key, session, page);
  }
}

/**
 * Runs the session until the person quits; `base` carries the search options other than query and
 * paging. The first page is fetched before the session's frame opens, so an error there (an unknown
 * index, say) is reported as by any command; a later error closes the frame, then propagates.
 */
export async function interactiveSearch(searcher: Reader, indexId: string, start: Session, base: Omit<SearchParams, "query" | "offset" | "limit">, extraFields: string[]): Promise<void> {
  const session = { ...start };
  // Every field (and highlights, where the index keeps them) is fetched, so a result can be shown in
  // full; the table shows the fields asked for. Highlights fetched for the display do not reorder the
  // results: the page-through lists them as a pipe or --json does (asked for with --result-fields
  // highlights, they rank them, there as everywhere).
  const display = base.resultFields === undefined ? { resultFields: "highlights", highlightsRank: false } : {};
  const fetch = () => searcher.search(indexId, { ...base, ...display, objectFields: "*", query: session.query, offset: session.offset, limit: session.limit });
  let page: SearchPage = await fetch();
  begin(`semsearch · ${indexId}`);
  try {
    for (let show = true; ; ) {
      if (show) process.stdout.write(renderPage(session, page, extraFields));
      const key = await chooseKey("What next?", menuEntries(page, session));
      if (key === null || key === "q") break;
      show = await act(searcher, key, session, page);
      if (show) page = await fetch();
    }
  } catch (error) {
    abort("Search failed.");
    throw error;
  }
  end("Bye.");
}
