/**
 * The interactive page-through of `semsearch search`: shows a page as a table, then offers next,
 * previous, go to page, change the page size, open one result, new query, quit. Esc or Ctrl+C at
 * any prompt leaves (the prompts restore the terminal).
 */
import { MAX_LIMIT, MAX_RESULTS, type Engine, type SearchHit, type SearchPage, type SearchParams } from "../engine/index.js";
import { ask, begin, choose, end } from "./prompts.js";
import { renderHighlight } from "./render/highlight.js";
import { chalk } from "./render/style.js";
import { renderSearchTable, snippet, terminalWidth } from "./render/table.js";

export interface Session {
  query: string;
  offset: number;
  limit: number;
}

type Action = "next" | "previous" | "goto" | "limit" | "open" | "query" | "quit";

/** The header above a page: query, page X of Y (≥ when the total is a minimum) and the total. */
export function pageHeader(query: string, page: SearchPage): string {
  const { pages, page: current, statistics } = page.pagination;
  const min = statistics.total_calculation === "minimum" ? "≥ " : "";
  return `${chalk.bold(`“${query}”`)} · page ${current} of ${min}${Math.max(pages, 1)} · ${min}${statistics.total} results`;
}

function integerIn(min: number, max: number) {
  return (value: string) => {
    const n = Number(value.trim());
    return Number.isInteger(n) && n >= min && n <= max ? undefined : `a whole number from ${min} to ${max}`;
  };
}

/** One result in full: every field of the object, pretty-printed, and its highlights. */
export function renderHit(hit: SearchHit, rank: number, query: string): string {
  const lines = [chalk.bold(`#${rank} ${hit.id}`) + chalk.dim(` · score ${hit.score.toFixed(3)}`), JSON.stringify(hit.object, null, 2)];
  for (const h of hit.highlights ?? []) {
    lines.push(`${chalk.dim(`${h.references[0]?.source ?? ""} [${h.references[0]?.position.start_char}–${h.references[0]?.position.end_char}]`)} ${renderHighlight(h.highlight.text, query, terminalWidth() - 20)}`);
  }
  return `${lines.join("\n")}\n`;
}

/** Runs the session until the person quits; `base` carries the search options other than query and paging. */
export async function interactiveSearch(engine: Engine, indexId: string, start: Session, base: Omit<SearchParams, "query" | "offset" | "limit">, extraFields: string[]): Promise<void> {
  const session = { ...start };
  const write = (text: string) => process.stdout.write(text);
  begin(`semsearch · ${indexId}`);
  let page: SearchPage | null = null;
  for (;;) {
    if (page === null) {
      // Every field (and highlights, where the index keeps them) is fetched, so a result can be shown
      // in full; the table shows the fields asked for.
      page = await engine.search(indexId, { ...base, objectFields: "*", resultFields: base.resultFields ?? "highlights", query: session.query, offset: session.offset, limit: session.limit });
      write(`\n${pageHeader(session.query, page)}\n`);
      write(page.hits.length > 0 ? renderSearchTable(page, session.offset, extraFields, session.query) : `${chalk.dim("No results on this page.")}\n`);
    }
    const last = page.pagination.statistics.total_calculation === "exact" ? Math.max(page.pagination.pages, 1) : Math.ceil(MAX_RESULTS / session.limit);
    const options = [
      ...(page.pagination.next ? [{ value: "next" as const, label: "Next page" }] : []),
      ...(session.offset > 0 ? [{ value: "previous" as const, label: "Previous page" }] : []),
      { value: "goto" as const, label: "Go to page…" },
      { value: "limit" as const, label: "Results per page…", hint: String(session.limit) },
      ...(page.hits.length > 0 ? [{ value: "open" as const, label: "Show a result in full…" }] : []),
      { value: "query" as const, label: "New query…" },
      { value: "quit" as const, label: "Quit" },
    ];
    const action: Action | null = await choose<Action>("What next?", options, page.pagination.next ? "next" : "query");
    if (action === null || action === "quit") break;
    if (action === "next" && page.pagination.next) session.offset = page.pagination.next.offset;
    else if (action === "previous") session.offset = Math.max(0, session.offset - session.limit);
    else if (action === "goto") {
      const answer = await ask(`Page (1–${last})`, { placeholder: String(page.pagination.page + 1), validate: integerIn(1, last) });
      if (answer === null) break;
      session.offset = Math.min((Number(answer) - 1) * session.limit, MAX_RESULTS - 1);
    } else if (action === "limit") {
      const answer = await ask(`Results per page (1–${MAX_LIMIT})`, { initial: String(session.limit), validate: integerIn(1, MAX_LIMIT) });
      if (answer === null) break;
      session.limit = Number(answer);
      session.offset = Math.floor(session.offset / session.limit) * session.limit;
    } else if (action === "open") {
      const picked = await choose(
        "Which result?",
        page.hits.map((hit, i) => ({ value: String(i), label: `${session.offset + i + 1}. ${hit.id}`, hint: snippet(hit.highlights?.[0]?.highlight.text ?? hit.text, 50) })),
      );
      if (picked === null) break;
      write(`\n${renderHit(page.hits[Number(picked)] as SearchHit, session.offset + Number(picked) + 1, session.query)}`);
      continue; // the same page: its menu again, without reprinting the table
    } else if (action === "query") {
      const answer = await ask("New query", { initial: session.query, validate: (value) => (value.trim() === "" ? "type a query" : undefined) });
      if (answer === null) break;
      session.query = answer.trim();
      session.offset = 0;
    }
    page = null;
  }
  end("Bye.");
}
