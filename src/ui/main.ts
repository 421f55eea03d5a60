/**
 * The search page of `semsearch serve`: pick an index, search as you type, read why each result
 * matched, page through, open a result. It uses only the public HTTP API (and the thumbnail route),
 * so it is also an example of the API. The key stays in this tab's session storage.
 */
import { ApiError, createApi } from "./api.js";
import { byId, h, jsonTree } from "./dom.js";
import { Latest } from "./latest.js";
import { highlightView, shortValue, type TextHighlight } from "./marks.js";
import { paginationView, type Pagination } from "./pagination-view.js";
import { MODES, PAGE_SIZE, readState, searchParams, writeState, type Mode, type PageState } from "./url-state.js";

interface IndexInfo {
  id: string;
  name?: string;
  model: string;
  state: "BUILDING" | "READY";
  status: { UPLOADED: number; PROCESSING: number; READY: number; ERROR: number };
  configuration: { index_type: { name: string; neural_only?: boolean } };
  blocked?: { code: string; message: string };
}

interface ImageHighlight {
  reference_type: "image";
  media_identifier: string;
}

interface Explain {
  ranking: string;
  lexical?: { score: number; normalized: number } | null;
  vector?: { similarity: number; normalized: number } | null;
}

interface SearchResult {
  id: string;
  object: Record<string, unknown>;
  score?: number;
  explain?: Explain;
  highlights?: (TextHighlight | ImageHighlight)[];
}

interface SearchResponse {
  results: SearchResult[];
  pagination: Pagination;
}

const KEY_STORAGE = "semsearch.key";
/** Quiet time after a keystroke before the search is sent. */
const DEBOUNCE_MS = 150;
/** How often a building index's counts are read again. */
const BUILD_POLL_MS = 2000;
const TEXT_HIGHLIGHTS_SHOWN = 3;
const THUMBNAILS_SHOWN = 4;
const FIELDS_SHOWN = 6;

const needsKey = document.querySelector('meta[name="semsearch-auth"]')?.getAttribute("content") !== "none";

const el = {
  keyForm: byId<HTMLFormElement>("key-form"),
  key: byId<HTMLInputElement>("key"),
  keyMessage: byId<HTMLParagraphElement>("key-message"),
  forgetKey: byId<HTMLButtonElement>("forget-key"),
  searchForm: byId<HTMLFormElement>("search-form"),
  index: byId<HTMLSelectElement>("index"),
  indexInfo: byId<HTMLDivElement>("index-info"),
  q: byId<HTMLInputElement>("q"),
  filter: byId<HTMLInputElement>("filter"),
  filterError: byId<HTMLDivElement>("filter-error"),
  fields: byId<HTMLInputElement>("fields"),
  hybrid: byId<HTMLFieldSetElement>("hybrid"),
  mode: byId<HTMLSelectElement>("mode"),
  ratio: byId<HTMLInputElement>("ratio"),
  ratioValue: byId<HTMLOutputElement>("ratio-value"),
  error: byId<HTMLDivElement>("error"),
  summary: byId<HTMLParagraphElement>("summary"),
  announcer: byId<HTMLDivElement>("announcer"),
  results: byId<HTMLOListElement>("results"),
  pager: byId<HTMLElement>("pager"),
  previous: byId<HTMLButtonElement>("previous"),
  next: byId<HTMLButtonElement>("next"),
  position: byId<HTMLSpanElement>("position"),
  detail: byId<HTMLDialogElement>("detail"),
  detailTitle: byId<HTMLHeadingElement>("detail-title"),
  detailBody: byId<HTMLDivElement>("detail-body"),
  detailClose: byId<HTMLButtonElement>("detail-close"),
};

let key: string | null = needsKey ? sessionStorage.getItem(KEY_STORAGE) : null;
const api = createApi(() => (needsKey ? key : null));
let indexes: IndexInfo[] = [];
let state: PageState = readState(location.search);
let shown: SearchResult[] = [];
let nextPage: { offset: number; limit: number } | null = null;
let thumbnailUrls: string[] = [];
const searches = new Latest();
const thumbnails = new Latest();
/** The result opened in the dialog: opening another (or closing it) drops the answer for the one before. */
const details = new Latest();
let debounce: ReturnType<typeof setTimeout> | undefined;
let buildPoll: ReturnType<typeof setTimeout> | undefined;

function currentIndex(): IndexInfo | undefined {
  return indexes.find((index) => index.id === state.index || index.name === state.index);
}

function showError(error: unknown): void {
  const message = error instanceof ApiError ? error.message + (error.hint ? ` ${error.hint}` : "") : error instanceof Error ? error.message : String(error);
  el.error.replaceChildren(message);
  el.error.hidden = false;
}

function clearError(): void {
  el.error.hidden = true;
  el.error.replaceChildren();
}

// ---- the key ----

function askForKey(message = ""): void {
  // (a building index's counts are read again only with a key that works)
  clearTimeout(buildPoll);
  el.keyForm.hidden = false;
  el.searchForm.hidden = true;
  el.forgetKey.hidden = true;
  el.keyMessage.textContent = message;
  el.key.value = "";
  el.key.focus();
}


el.keyForm.addEventListener("submit", (event) => {
  event.preventDefault();
  const given = el.key.value.trim();
  if (!given) {
    el.keyMessage.textContent = "Enter a key: `semsearch keys create --read-only` makes one that can search.";
    return;
  }
  key = given;
  sessionStorage.setItem(KEY_STORAGE, given);
  void start();
});

/** The server no longer takes the key (revoked, or the project's keys changed): it is forgotten, and another asked for. */
function keyRefused(error: ApiError): void {
  key = null;
  sessionStorage.removeItem(KEY_STORAGE);
  askForKey(error.message);
}

el.forgetKey.addEventListener("click", () => {
  key = null;
  sessionStorage.removeItem(KEY_STORAGE);
  askForKey("The key is forgotten in this tab.");
});

// ---- indexes ----

/** An index in the picker: its name and id, type, model (a folder by its last name), state and object count. */
function indexLabel(index: IndexInfo): string {
  const kind = `${index.configuration.index_type.name}${index.configuration.index_type.neural_only ? ", neural only" : ""}`;
  const model = index.model.split(/[\\/]/).filter(Boolean).at(-1) ?? index.model;
  const { UPLOADED, PROCESSING, READY, ERROR } = index.status;
  const total = UPLOADED + PROCESSING + READY + ERROR;
  const state = index.state === "BUILDING" ? `building ${READY.toLocaleString("en-US")}/${total.toLocaleString("en-US")}` : `${total.toLocaleString("en-US")} objects`;
  return `${index.name ? `${index.name} (${index.id})` : index.id} · ${kind} · ${model} · ${state}`;
}

function renderIndexInfo(): void {
  const index = currentIndex();
  clearTimeout(buildPoll);
  if (!index) {
    el.indexInfo.replaceChildren(indexes.length === 0 ? "This project has no indexes yet: `semsearch index create` makes one." : "");
    return;
  }
  const { UPLOADED, PROCESSING, READY, ERROR } = index.status;
  const total = UPLOADED + PROCESSING + READY + ERROR;
  const counts = `${READY.toLocaleString("en-US")} searchable of ${total.toLocaleString("en-US")} objects${ERROR ? ` · ${ERROR.toLocaleString("en-US")} failed` : ""}${PROCESSING + UPLOADED ? ` · ${(PROCESSING + UPLOADED).toLocaleString("en-US")} to index` : ""}`;
  const parts: (Node | string)[] = [h("span", {}, `Model ${index.model} · ${index.state === "READY" ? "ready" : "building"} · ${counts}`)];
  if (index.state === "BUILDING") {
    parts.push(h("progress", { max: String(Math.max(total, 1)), value: String(READY), "aria-label": `Indexing progress of ${index.name ?? index.id}` }));
    buildPoll = setTimeout(() => void refreshIndex(index.id), BUILD_POLL_MS);
  }
  if (index.blocked) parts.push(h("span", { class: "warning" }, ` Blocked: ${index.blocked.message}`));
  el.indexInfo.replaceChildren(...parts);
  el.hybrid.hidden = index.configuration.index_type.neural_only === true;
}

async function refreshIndex(id: string): Promise<void> {
  try {
    const fresh = await api.json<IndexInfo>(`/v1/indexes/${encodeURIComponent(id)}`);
    indexes = indexes.map((index) => (index.id === id ? fresh : index));
    const option = [...el.index.options].find((candidate) => candidate.value === id);
    if (option) option.textContent = indexLabel(fresh);
    if (currentIndex()?.id === id) renderIndexInfo();
  } catch (caught) {
    const index = currentIndex();
    if (index?.id !== id) return;
    if (caught instanceof ApiError && caught.code === "KEY_REFUSED") return keyRefused(caught);
    if (caught instanceof ApiError && caught.code === "INDEX_NOT_FOUND") return void indexGone(index);
    // (the server restarting, or busy: read again later)
    clearTimeout(buildPoll);
    buildPoll = setTimeout(() => void refreshIndex(id), BUILD_POLL_MS * 2);
  }
}

/** The index shown was deleted meanwhile: its results go, the list is read again, and the page says so. */
async function indexGone(index: IndexInfo): Promise<void> {
  searches.cancel();
  clearResults();
  try {
    await loadIndexes();
  } catch (caught) {
    if (caught instanceof ApiError && caught.code === "KEY_REFUSED") return keyRefused(caught);
  }
  showError(new ApiError(404, "INDEX_NOT_FOUND", `The index "${index.name ?? index.id}" was deleted.`));
}

/** Lists the indexes and picks the URL's; false when it is not there (a message says so). */
async function loadIndexes(): Promise<boolean> {
  indexes = (await api.json<{ indexes: IndexInfo[] }>("/v1/indexes")).indexes;
  el.index.replaceChildren(...indexes.map((index) => h("option", { value: index.id }, indexLabel(index))));
  const chosen = currentIndex() ?? indexes[0];
  const asked = state.index;
  if (chosen) {
    // The URL keeps what the user wrote (a name stays a name).
    if (!currentIndex()) state = { ...state, index: chosen.name ?? chosen.id };
    el.index.value = chosen.id;
  }
  renderIndexInfo();
  if (asked && asked !== state.index) {
    showError(new ApiError(404, "INDEX_NOT_FOUND", `This project has no index "${asked}"${chosen ? `: showing ${chosen.name ?? chosen.id}` : ""}.`));
    return false;
  }
  return true;
}

// ---- searching ----

function objectFields(): string {
  const chosen = el.fields.value.split(",").map((field) => field.trim()).filter(Boolean);
  return chosen.length ? chosen.join(",") : "*";
}

function scheduleSearch(): void {
  performance.mark("semsearch:input");
  clearTimeout(debounce);
  debounce = setTimeout(() => void search("replace"), DEBOUNCE_MS);
}

function setUrl(how: "push" | "replace"): void {
  const url = `${location.pathname}${writeState(state)}`;
  if (url === `${location.pathname}${location.search}`) return;
  if (how === "push") history.pushState(null, "", url);
  else history.replaceState(null, "", url);
}

function clearResults(): void {
  for (const url of thumbnailUrls) URL.revokeObjectURL(url);
  thumbnailUrls = [];
  thumbnails.cancel();
  shown = [];
  nextPage = null;
  el.results.replaceChildren();
  el.summary.textContent = "";
  el.pager.hidden = true;
}

function showFilterError(error: ApiError): boolean {
  const issue = error.issues.find((candidate) => candidate.column !== undefined);
  if (error.code !== "INVALID_FILTER" || issue?.column === undefined) return false;
  const text = el.filter.value;
  const at = Math.min(Math.max(issue.column - 1, 0), text.length);
  // The character at fault, marked in the filter as written (after its end: a space marks it).
  const end = at < text.length ? at + (text.codePointAt(at)! > 0xffff ? 2 : 1) : at;
  el.filterError.replaceChildren(
    h("span", {}, error.message),
    h("code", { class: "filter-echo", "aria-hidden": "true" }, text.slice(0, at), h("mark", { class: "error-at" }, text.slice(at, end) || " "), text.slice(end)),
  );
  el.filterError.hidden = false;
  el.filter.setAttribute("aria-invalid", "true");
  el.filter.setSelectionRange(at, end);
  return true;
}

function clearFilterError(): void {
  el.filterError.hidden = true;
  el.filterError.replaceChildren();
  el.filter.removeAttribute("aria-invalid");
}

async function search(how: "push" | "replace"): Promise<void> {
  clearTimeout(debounce);
  state = { ...state, q: el.q.value, filter: el.filter.value };
  setUrl(how);
  const index = currentIndex();
  if (!index || !state.q.trim()) {
    searches.cancel();
    clearResults();
    clearError();
    clearFilterError();
    el.summary.textContent = index ? "Type a query to search." : "";
    return;
  }
  const request = searches.begin();
  el.results.setAttribute("aria-busy", "true");
  try {
    const response = await api.json<SearchResponse>(`/v1/indexes/${encodeURIComponent(index.id)}/search`, searchParams(state, objectFields()), request.signal);
    if (!request.current()) return;
    clearError();
    clearFilterError();
    render(response);
    // Results are painted at the next frame after this one's layout.
    requestAnimationFrame(() => setTimeout(() => {
      if (!request.current()) return;
      performance.mark("semsearch:painted");
      try {
        performance.measure("semsearch:input-to-paint", "semsearch:input", "semsearch:painted");
      } catch {
        // no input mark (a search started by the URL or a page button)
      }
      document.documentElement.dataset.searched = String(Number(document.documentElement.dataset.searched ?? 0) + 1);
    }, 0));
  } catch (caught) {
    if (!request.current()) return;
    if (caught instanceof ApiError && caught.code === "KEY_REFUSED") return keyRefused(caught);
    if (caught instanceof ApiError && caught.code === "INDEX_NOT_FOUND") return void indexGone(index);
    clearResults();
    if (caught instanceof ApiError && showFilterError(caught)) {
      clearError();
    } else {
      clearFilterError();
      showError(caught);
    }
    el.announcer.textContent = caught instanceof Error ? caught.message : String(caught);
  } finally {
    if (request.current()) el.results.removeAttribute("aria-busy");
  }
}

// ---- results ----

function title(result: SearchResult): string {
  for (const field of ["title", "name", "path"]) {
    const value = result.object[field];
    if (typeof value === "string" && value.trim()) return value;
  }
  return result.id;
}

function scoreLine(result: SearchResult): Node | null {
  if (result.score === undefined) return null;
  const parts = [`score ${result.score.toFixed(3)}`];
  const explain = result.explain;
  if (explain?.lexical !== undefined) parts.push(explain.lexical === null ? "lexical —" : `lexical ${explain.lexical.normalized.toFixed(3)} (BM25 ${explain.lexical.score.toFixed(2)})`);
  if (explain?.vector !== undefined) parts.push(explain.vector === null ? "vector —" : `vector ${explain.vector.normalized.toFixed(3)} (cosine ${explain.vector.similarity.toFixed(3)})`);
  return h("p", { class: "score" }, parts.join(" · "));
}

function highlightNode(highlight: TextHighlight, object: Record<string, unknown>): HTMLElement {
  const view = highlightView(highlight, object);
  return h(
    "blockquote",
    { class: "highlight" },
    view.source ? h("span", { class: "source" }, view.source) : null,
    h("span", { class: "text" }, view.cutBefore ? "…" : "", view.before, h("mark", {}, view.marked), view.after, view.cutAfter ? "…" : ""),
  );
}

function thumbnailNode(image: ImageHighlight, rank: number): HTMLElement {
  const figure = h("figure", { class: "thumbnail", "data-image": image.media_identifier }, h("span", { class: "placeholder", "aria-hidden": "true" }), h("figcaption", {}, `${rank}. ${shortValue(image.media_identifier, 80).text}`));
  return figure;
}

async function loadThumbnails(results: SearchResult[]): Promise<void> {
  const request = thumbnails.begin();
  const jobs: { figure: HTMLElement; id: string; image: string }[] = [];
  for (const figure of el.results.querySelectorAll<HTMLElement>("figure.thumbnail")) {
    const id = figure.closest("li")?.dataset.id;
    if (id !== undefined) jobs.push({ figure, id, image: figure.dataset.image ?? "" });
  }
  // Four at a time: the server fetches and scales each.
  const next = async (): Promise<void> => {
    for (let job = jobs.shift(); job; job = jobs.shift()) {
      const { figure, id, image } = job;
      try {
        const blob = await api.blob(`/v1/objects/${encodeURIComponent(id)}/thumbnail`, new URLSearchParams({ image, size: "160" }), request.signal);
        if (!request.current()) return;
        const url = URL.createObjectURL(blob);
        thumbnailUrls.push(url);
        figure.querySelector(".placeholder")?.replaceWith(h("img", { src: url, alt: `Image ${shortValue(image, 120).text} of ${title(results.find((r) => r.id === id)!)}`, width: "160", height: "160" }));
      } catch {
        if (!request.current()) return;
        figure.querySelector(".placeholder")?.replaceWith(h("span", { class: "no-image" }, "image unavailable"));
      }
    }
  };
  await Promise.all([next(), next(), next(), next()]);
}

function resultNode(result: SearchResult, rank: number): HTMLLIElement {
  const texts = (result.highlights ?? []).filter((highlight): highlight is TextHighlight => "highlight_type" in highlight && highlight.highlight_type === "text");
  const images = (result.highlights ?? []).filter((highlight): highlight is ImageHighlight => "reference_type" in highlight && highlight.reference_type === "image");
  const sources = new Set(texts.slice(0, TEXT_HIGHLIGHTS_SHOWN).map((highlight) => highlight.references[0]?.source));
  // (the id and the title are shown above)
  const fields = Object.entries(result.object).filter(([field, value]) => !sources.has(field) && !(field === "id" && value === result.id) && value !== title(result)).slice(0, FIELDS_SHOWN);
  return h(
    "li",
    { "data-id": result.id },
    h(
      "article",
      { "aria-labelledby": `result-${rank}` },
      h("h2", { class: "result-title" }, h("button", { type: "button", class: "open", id: `result-${rank}`, "data-rank": String(rank) }, title(result))),
      h("p", { class: "meta" }, h("code", {}, result.id)),
      scoreLine(result),
      images.length ? h("div", { class: "thumbnails" }, images.slice(0, THUMBNAILS_SHOWN).map((image, i) => thumbnailNode(image, i + 1))) : null,
      texts.slice(0, TEXT_HIGHLIGHTS_SHOWN).map((highlight) => highlightNode(highlight, result.object)),
      texts.length > TEXT_HIGHLIGHTS_SHOWN ? h("p", { class: "more" }, `${texts.length - TEXT_HIGHLIGHTS_SHOWN} more highlights: open the result`) : null,
      fields.length
        ? h(
            "dl",
            { class: "fields" },
            fields.flatMap(([field, value]) => {
              const short = shortValue(value);
              return [h("dt", {}, field), h("dd", {}, short.text + (short.cut ? "…" : ""))];
            }),
          )
        : null,
    ),
  );
}

function render(response: SearchResponse): void {
  clearResults();
  shown = response.results;
  const view = paginationView(response.pagination, shown.length);
  nextPage = view.next;
  el.summary.textContent = view.total;
  el.results.replaceChildren(...shown.map((result, i) => resultNode(result, i)));
  el.position.textContent = view.position;
  el.previous.disabled = !view.hasPrevious;
  el.next.disabled = view.next === null;
  el.pager.hidden = !view.hasPrevious && view.next === null;
  el.announcer.textContent = view.announcement;
  if (el.results.querySelector("figure.thumbnail")) void loadThumbnails(shown);
}

function goToPage(page: number): void {
  if (page < 1 || page === state.page) return;
  state = { ...state, page };
  void search("push");
}

el.previous.addEventListener("click", () => goToPage(state.page - 1));
el.next.addEventListener("click", () => {
  // The response's own `next`: its offset names the page.
  if (nextPage) goToPage(Math.floor(nextPage.offset / PAGE_SIZE) + 1);
});

// ---- one result, whole ----

interface ObjectInfo {
  id: string;
  object: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  status: { state: string; indexes: { id: string; status: string; searchable: boolean; error?: string }[] };
}

async function openResult(rank: number): Promise<void> {
  const result = shown[rank];
  if (!result) return;
  el.detailTitle.textContent = title(result);
  el.detailBody.replaceChildren(h("p", {}, "Loading…"));
  if (!el.detail.open) el.detail.showModal();
  const texts = (result.highlights ?? []).filter((highlight): highlight is TextHighlight => "highlight_type" in highlight);
  const request = details.begin();
  try {
    const info = await api.json<ObjectInfo>(`/v1/objects/${encodeURIComponent(result.id)}`, undefined, request.signal);
    if (!request.current()) return;
    el.detailBody.replaceChildren(
      ...[
      h("p", { class: "meta" }, h("code", {}, info.id), ` · ${info.status.state} · added ${info.created_at} · updated ${info.updated_at}`),
      h(
        "table",
        {},
        h("caption", {}, "State in each index"),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Index"), h("th", { scope: "col" }, "Status"), h("th", { scope: "col" }, "Searchable"))),
        h("tbody", {}, info.status.indexes.map((entry) => h("tr", {}, h("td", {}, indexes.find((index) => index.id === entry.id)?.name ?? "", " ", h("code", {}, entry.id)), h("td", {}, entry.status + (entry.error ? `: ${entry.error}` : "")), h("td", {}, entry.searchable ? "yes" : "no")))),
      ),
      texts.length ? h("section", {}, h("h3", {}, `Highlights (${texts.length})`), texts.map((highlight) => highlightNode(highlight, info.object))) : null,
      h("section", {}, h("h3", {}, "Object"), jsonTree(info.object)),
      ].filter((node): node is HTMLElement => node !== null),
    );
  } catch (caught) {
    if (!request.current()) return;
    el.detailBody.replaceChildren(h("p", { role: "alert" }, caught instanceof Error ? caught.message : String(caught)));
  }
}

el.results.addEventListener("click", (event) => {
  const button = (event.target as HTMLElement).closest<HTMLButtonElement>("button.open");
  if (button?.dataset.rank === undefined) return;
  // (remembered to give the focus back to this result when the dialog closes)
  el.detail.dataset.rank = button.dataset.rank;
  void openResult(Number(button.dataset.rank));
});
el.detailClose.addEventListener("click", () => el.detail.close());
el.detail.addEventListener("close", () => {
  details.cancel();
  const rank = el.detail.dataset.rank;
  if (rank !== undefined) document.getElementById(`result-${rank}`)?.focus();
});

// ---- keyboard ----

function moveFocus(step: number): void {
  const buttons = [...el.results.querySelectorAll<HTMLButtonElement>("button.open")];
  if (buttons.length === 0) return;
  const at = buttons.indexOf(document.activeElement as HTMLButtonElement);
  const target = buttons[at === -1 ? (step > 0 ? 0 : buttons.length - 1) : Math.min(buttons.length - 1, Math.max(0, at + step))];
  target?.focus();
  target?.closest("li")?.scrollIntoView({ block: "nearest" });
}

document.addEventListener("keydown", (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey || el.detail.open) return;
  const target = event.target as HTMLElement;
  const typing = target.matches("input, select, textarea");
  if (typing) {
    // (no submit button: a form with several boxes and none would not submit on Enter)
    if ((target === el.q || target === el.filter) && event.key === "Enter") {
      event.preventDefault();
      state = { ...state, page: 1 };
      void search("replace");
    }
    if (target === el.q && event.key === "ArrowDown" && shown.length) {
      event.preventDefault();
      moveFocus(1);
    }
    return;
  }
  const actions: Record<string, () => void> = {
    "/": () => el.q.focus(),
    j: () => moveFocus(1),
    ArrowDown: () => moveFocus(1),
    k: () => moveFocus(-1),
    ArrowUp: () => moveFocus(-1),
    n: () => !el.next.disabled && el.next.click(),
    p: () => !el.previous.disabled && el.previous.click(),
  };
  const action = actions[event.key];
  if (!action || el.searchForm.hidden) return;
  event.preventDefault();
  action();
});


// ---- the controls ----

el.searchForm.addEventListener("submit", (event) => {
  event.preventDefault();
  state = { ...state, page: 1 };
  void search("replace");
});
el.q.addEventListener("input", () => {
  state = { ...state, page: 1 };
  scheduleSearch();
});
el.filter.addEventListener("input", () => {
  state = { ...state, page: 1 };
  scheduleSearch();
});
el.fields.addEventListener("change", () => void search("replace"));
el.index.addEventListener("change", () => {
  const index = indexes.find((candidate) => candidate.id === el.index.value);
  state = { ...state, index: index?.name ?? el.index.value, page: 1 };
  renderIndexInfo();
  void search("push");
});
el.mode.addEventListener("change", () => {
  const mode = el.mode.value as Mode;
  state = { ...state, mode: mode === "hybrid" ? undefined : mode, page: 1 };
  el.ratio.disabled = mode !== "hybrid";
  void search("replace");
});
el.ratio.addEventListener("input", () => {
  el.ratioValue.textContent = Number(el.ratio.value).toFixed(2);
  state = { ...state, ratio: Number(el.ratio.value), page: 1 };
  scheduleSearch();
});

window.addEventListener("popstate", () => {
  state = readState(location.search);
  applyStateToControls();
  const index = currentIndex();
  if (index) el.index.value = index.id;
  renderIndexInfo();
  void search("replace");
});

function applyStateToControls(): void {
  el.q.value = state.q;
  el.filter.value = state.filter;
  el.mode.value = state.mode ?? "hybrid";
  el.ratio.disabled = (state.mode ?? "hybrid") !== "hybrid";
  if (state.ratio !== undefined) el.ratio.value = String(state.ratio);
  el.ratioValue.textContent = Number(el.ratio.value).toFixed(2);
}

async function start(): Promise<void> {
  if (needsKey && !key) return askForKey();
  el.keyForm.hidden = true;
  el.forgetKey.hidden = !needsKey;
  let found: boolean;
  try {
    found = await loadIndexes();
  } catch (caught) {
    if (caught instanceof ApiError && caught.code === "KEY_REFUSED") return keyRefused(caught);
    el.searchForm.hidden = true;
    return showError(caught);
  }
  el.searchForm.hidden = false;
  applyStateToControls();
  el.q.focus();
  // (an index the URL names that is not there: its message stays, and no other index is searched until asked)
  if (found) await search("replace");
}

el.mode.replaceChildren(...MODES.map((mode) => h("option", { value: mode }, mode)));
void start();
