/**
 * An HTML file (`.html`, `.htm`) → a FileDocument, read by linkedom (a DOM without a browser: no
 * script ever runs, nothing is fetched) and Mozilla's Readability (Firefox's reader view), both
 * loaded only when an HTML file is read.
 *
 * - title: the `<title>`'s text, else the first `<h1>`'s, else the file name.
 * - body: when Readability judges the page an article (isProbablyReaderable: some 140+ character
 *   paragraphs) and finds one, the article's text; otherwise (a short page, a list of links, a page
 *   too large or deep for Readability) the page's visible text, less `nav` and page-level `header`
 *   and `footer`. Either way no `script`, `style`, `noscript`, `template`, `svg`, `iframe`,
 *   `object`, `embed`, `canvas`, `select` or hidden element (`hidden`, `aria-hidden="true"`, an
 *   inline `display: none` or `visibility: hidden`) gives text.
 * - Blocks (p, h1–h6, li, tr, div and the other block elements, lines split by `<br>`, each line of
 *   a `<pre>`) are separated by a blank line, whitespace inside one collapsed; a table row's cells
 *   are joined by ` | `. Entities are decoded by the parser.
 */
import { UnreadableFile, type FileDocument } from "./document.js";
import { fileNameTitle, joinBlocks, oneLine } from "./plain-text.js";

/** The little of a linkedom node this module reads (the DOM's types are not in the project's `lib`). */
interface DomNode {
  nodeType: number;
  localName?: string;
  data?: string;
  textContent: string | null;
  childNodes: ArrayLike<DomNode>;
  previousElementSibling?: DomNode | null;
  getAttribute?(name: string): string | null;
  hasAttribute?(name: string): boolean;
  closest?(selector: string): DomNode | null;
  querySelectorAll(selector: string): Iterable<DomNode>;
}
interface DomDocument extends DomNode {
  documentElement: DomNode | null;
  children: ArrayLike<DomNode>;
}

const count = (n: number) => n.toLocaleString("en-US");
const TEXT_NODE = 3;
const ELEMENT_NODE = 1;

/**
 * The most tags (counted as `<` characters) a page may have. linkedom spends some 10 µs and a few
 * hundred bytes per node (measured: 800,000 nodes in 3.5 s, 5,000,000 in minutes); a real 5 MB
 * page has about 200,000.
 */
export const MAX_HTML_TAGS = 300_000;

/** Readability reads pages of at most this many elements (larger ones are read as visible text: see withinReadabilityLimits). */
export const MAX_READABILITY_ELEMENTS = 30_000;
/** Readability reads pages nested at most this deep. */
export const MAX_READABILITY_DEPTH = 100;

/** Elements whose content is never text a reader sees. */
const NEVER_TEXT = new Set(["head", "title", "meta", "link", "base", "script", "style", "noscript", "template", "svg", "iframe", "object", "embed", "canvas", "select", "datalist"]);
/** Elements that start and end a block of text. */
const BLOCKS = new Set(
  "address article aside blockquote body caption center dd details dialog div dl dt fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr html legend li main nav ol p pre section summary table tbody tfoot thead tr ul".split(" "),
);
/** Table cells: a row's are joined by ` | `. */
const CELLS = new Set(["td", "th"]);
/** Page-level boilerplate, dropped from the visible text when Readability finds no article. */
const BOILERPLATE = new Set(["nav", "header", "footer"]);
/** What makes a `header` or `footer` part of its content rather than the page's banner (as ARIA decides). */
const SECTIONING = "article, aside, main, nav, section";

/**
 * An HTML file's document. Any text is HTML to a browser, so nothing is refused but a page of more
 * than MAX_HTML_TAGS `<`, which would take minutes and gigabytes to build as a DOM.
 */
export async function readHtml(text: string, fileName: string): Promise<FileDocument> {
  const tags = countTags(text);
  if (tags > MAX_HTML_TAGS) {
    throw new UnreadableFile(`too many tags to read as HTML: ${count(tags)} \`<\` (at most ${count(MAX_HTML_TAGS)})`, "limit");
  }
  const [{ parseHTML }, { Readability, isProbablyReaderable }] = await Promise.all([import("linkedom"), import("@mozilla/readability")]);
  const parse = (): DomDocument => {
    const document = parseHTML(text).document as DomDocument;
    // (linkedom builds no <html>, <head> or <body> that the text leaves out, and puts what follows
    // a lone `<title>` or a `</head>` outside them, where Readability does not look: such a page
    // is read again inside a skeleton, as a browser would place it)
    if (wellFormed(document)) return document;
    return parseHTML(`<!doctype html><html><head></head><body>${text}</body></html>`).document as DomDocument;
  };
  let document = parse();
  const title = firstText(document, "title") || firstText(document, "h1") || fileNameTitle(fileName);
  let blocks: string[] | undefined;
  if (withinReadabilityLimits(document) && isProbablyReaderable(document as never)) {
    blocks = articleBlocks(new Readability(document as never, { serializer: (node) => node }));
    // (Readability takes the page apart as it looks: the fallback reads it afresh)
    if (blocks === undefined) document = parse();
  }
  return { title, body: joinBlocks(blocks ?? visibleBlocks(document, true)) };
}

/** The blocks of the article Readability finds, or undefined when it finds none with text. */
function articleBlocks(readability: { parse(): { content?: unknown } | null }): string[] | undefined {
  let content: DomNode | undefined;
  try {
    content = (readability.parse()?.content ?? undefined) as DomNode | undefined;
  } catch {
    // (Readability throws only where its heuristics break on a strange page: the page's visible
    // text is then the body, as for a page that is no article)
    return undefined;
  }
  const blocks = content === undefined ? [] : visibleBlocks(content, false);
  return blocks.some((block) => block !== "") ? blocks : undefined;
}

/** The text of the first `tag` element outside any `<svg>` (whose `<title>` is an image's tooltip), on one line. */
function firstText(document: DomDocument, tag: string): string {
  for (const element of document.querySelectorAll(tag)) if (!element.closest?.("svg")) return oneLine(element.textContent ?? "");
  return "";
}

/**
 * Whether a page is small and shallow enough for Readability: its cost grows with the elements
 * times their depth (measured: 24,000 elements 5 levels deep in 1.4 s, 100 deep in 2.6–5 s; but
 * 6,000 nested 1,000 deep in 6 s and 95,000 nested 19,000 deep in 10 minutes). Its own
 * `maxElemsToParse` cannot be used: it counts `getElementsByTagName("*")`, which linkedom answers
 * with none. (Firefox does not offer reader view above 3,000 elements.) Iterative, and stops at
 * the first limit passed.
 */
function withinReadabilityLimits(document: DomDocument): boolean {
  let elements = 0;
  const stack: { node: DomNode; depth: number }[] = [{ node: document, depth: 0 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (item.depth > MAX_READABILITY_DEPTH || ++elements > MAX_READABILITY_ELEMENTS) return false;
    for (const child of Array.from(item.node.childNodes)) if (child.nodeType === ELEMENT_NODE) stack.push({ node: child, depth: item.depth + 1 });
  }
  return true;
}

/** How many `<` a text holds: an upper bound of its tags (and of its text nodes). */
function countTags(text: string): number {
  let tags = 0;
  for (let at = text.indexOf("<"); at !== -1; at = text.indexOf("<", at + 1)) tags++;
  return tags;
}

/** Whether linkedom's tree has the page's content under `<html>`'s `<head>` and `<body>` alone. */
function wellFormed(document: DomDocument): boolean {
  const root = document.documentElement;
  if (root?.localName !== "html" || document.children.length !== 1) return false;
  return Array.from(root.childNodes).every((node) => node.nodeType !== ELEMENT_NODE || node.localName === "head" || node.localName === "body");
}

/**
 * The text blocks under `root`, one per block element, `<br>` and `<pre>` line (empty ones left for
 * joinBlocks to drop). Iterative, not recursive: a page may nest elements 100,000 deep.
 */
function visibleBlocks(root: DomNode, dropBoilerplate: boolean): string[] {
  const blocks: string[] = [];
  let current = "";
  let preDepth = 0;
  const endBlock = () => {
    blocks.push(oneLine(current));
    current = "";
  };
  const stack: { node: DomNode; leaving: boolean }[] = [{ node: root, leaving: false }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { node, leaving } = item;
    const name = node.localName ?? "";
    if (leaving) {
      if (name === "pre") preDepth--;
      if (BLOCKS.has(name)) endBlock();
    } else if (node.nodeType === TEXT_NODE) {
      const data = node.data ?? "";
      (preDepth > 0 ? data.split("\n") : [data]).forEach((line, i) => {
        if (i > 0) endBlock();
        current += line;
      });
    } else if (node.nodeType === ELEMENT_NODE || node === root) {
      if (node.nodeType === ELEMENT_NODE && !shown(node, dropBoilerplate)) continue;
      if (name === "br") endBlock();
      if (BLOCKS.has(name)) endBlock();
      if (CELLS.has(name) && CELLS.has(node.previousElementSibling?.localName ?? "")) current += " | ";
      if (name === "pre") preDepth++;
      stack.push({ node, leaving: true });
      // (childNodes once: linkedom builds the list anew on each read)
      const children = Array.from(node.childNodes);
      for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i] as DomNode, leaving: false });
    }
  }
  endBlock();
  return blocks;
}

/** Whether an element's content is text a reader sees. */
function shown(element: DomNode, dropBoilerplate: boolean): boolean {
  const name = element.localName ?? "";
  if (NEVER_TEXT.has(name)) return false;
  if (dropBoilerplate && BOILERPLATE.has(name) && (name === "nav" || !element.closest?.(SECTIONING))) return false;
  if (element.hasAttribute?.("hidden") || element.getAttribute?.("aria-hidden") === "true") return false;
  const style = element.getAttribute?.("style") ?? "";
  return !/(^|;)\s*(display\s*:\s*none|visibility\s*:\s*hidden)\s*(!important\s*)?(;|$)/i.test(style);
}
