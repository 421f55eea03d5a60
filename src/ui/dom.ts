/** A small helper to build DOM nodes: text is always set as text, never parsed as HTML. */

type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Record<string, string | boolean | undefined> = {}, ...children: (Child | Child[])[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (name === "class") element.className = value === true ? "" : value;
    else element.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child);
  }
  return element;
}

/** The element with this id; its absence is a bug in the page. */
export function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the page has no #${id}`);
  return element as T;
}

/** Characters that change the direction of the text around them (bidi controls), invisible where they are. */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Text with its bidi controls written as JSON escapes (`\u202e`), so the tree shows what is there. */
export function escapeBidi(text: string): string {
  return text.replace(BIDI_CONTROLS, (control) => `\\u${control.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** An object as a tree a person can fold: objects and arrays as <details>, open to `openDepth`. */
export function jsonTree(value: unknown, openDepth = 2, depth = 0): Node {
  if (value === null || typeof value !== "object") {
    const kind = value === null ? "null" : typeof value;
    return h("span", { class: `json-${kind}` }, typeof value === "string" ? escapeBidi(JSON.stringify(value)) : String(value));
  }
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((item, i) => [String(i), item]) : Object.entries(value as Record<string, unknown>);
  const label = Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`;
  if (entries.length === 0) return h("span", { class: "json-empty" }, Array.isArray(value) ? "[]" : "{}");
  return h(
    "details",
    { class: "json", open: depth < openDepth },
    h("summary", {}, label),
    h("ul", {}, entries.map(([key, item]) => h("li", {}, h("span", { class: "json-key" }, escapeBidi(key)), ": ", jsonTree(item, openDepth, depth + 1)))),
  );
}
