/**
 * A Markdown file (`.md`, `.markdown`) → a FileDocument: CommonMark read by mdast-util-from-markdown,
 * YAML front matter (micromark-extension-frontmatter) parsed by `yaml` with the core schema, so a
 * date stays the text it was written as. All three load only when a Markdown file is read.
 *
 * - fields: the front matter's keys (it must be a mapping), as JSON: a number JSON cannot hold
 *   (`.inf`, `-.inf`, `.nan`) becomes null, as JSON.stringify makes it; keys that are not text
 *   (`1:`, `~:`) become text (`"1"`, `""`). The `title` key is not a field: it is the title.
 * - title: the front matter's `title` when it is text, a number or a boolean (`title: 1984` is
 *   "1984", as written), else the text of the first heading that has any, else the file name.
 * - body: the text without markup, one block per heading, paragraph, list item paragraph, table
 *   row, blockquote paragraph and code block, blocks separated by a blank line. Links keep their
 *   text, images their alt text, inline code its text, code blocks their lines. HTML is markup: an
 *   inline tag is dropped and the text around it kept; an HTML block (lines that start with a tag,
 *   up to a blank line) is dropped whole. A hard line break ends a block, as `<br>` does in HTML.
 */
import type { Nodes, Parent, Root } from "mdast";
import type { Scalar } from "yaml";
import { setOwn } from "../fields.js";
import type { JsonObject } from "../types.js";
import { UnreadableFile, type FileDocument } from "./document.js";
import { fileNameTitle, joinBlocks, oneLine } from "./plain-text.js";

/** The front matter's title (text) and the rest of its keys. */
interface FrontMatter {
  title?: string;
  fields: JsonObject;
}

/** A Markdown file's document. Throws UnreadableFile when its front matter is not a YAML mapping. */
export async function readMarkdown(text: string, fileName: string): Promise<FileDocument> {
  const [{ fromMarkdown }, { frontmatter }, { frontmatterFromMarkdown }] = await Promise.all([
    import("mdast-util-from-markdown"),
    import("micromark-extension-frontmatter"),
    import("mdast-util-frontmatter"),
  ]);
  const tree: Root = fromMarkdown(text, { extensions: [frontmatter(["yaml"])], mdastExtensions: [frontmatterFromMarkdown(["yaml"])] });
  const first = tree.children[0];
  const front = first?.type === "yaml" ? await readFrontMatter(first.value, first.position?.start.line ?? 1) : { fields: {} };
  const { blocks, heading } = treeBlocks(tree);
  const document: FileDocument = { title: front.title ?? heading ?? fileNameTitle(fileName), body: joinBlocks(blocks) };
  if (Object.keys(front.fields).length > 0) document.fields = front.fields;
  return document;
}

/** The front matter's title and fields; `line` is the file's line of its opening `---`. */
async function readFrontMatter(source: string, line: number): Promise<FrontMatter> {
  const YAML = await import("yaml");
  const lines = new YAML.LineCounter();
  const document = YAML.parseDocument(source, { schema: "core", lineCounter: lines });
  const failure = (offset: number, message: string) => new UnreadableFile(`front matter: line ${line + lines.linePos(offset).line}: ${message}`);
  const [error] = document.errors;
  // (yaml's messages go on with " at line 3, column 4:" and a quote of the line: the line is said first instead)
  if (error) throw failure(error.pos[0], error.message.replace(/ at line \d+, column \d+:[\s\S]*$/, ""));
  const contents = document.contents;
  if (contents === null) return { fields: {} }; // (empty, or comments only)
  if (!YAML.isMap(contents)) {
    const what = YAML.isSeq(contents) ? "a list" : "a single value";
    throw failure(contents.range[0], `${what}, not a mapping of keys to values (\`key: value\` lines)`);
  }
  let json: unknown;
  try {
    // (toJS refuses unresolved aliases and alias bombs; the JSON round trip is what makes the
    // values JSON: non-finite numbers become null, and every key is an own property, __proto__ too)
    json = JSON.parse(JSON.stringify(document.toJS({ maxAliasCount: 100 })));
  } catch (cause) {
    throw failure(contents.range[0], cause instanceof Error ? cause.message : String(cause));
  }
  const fields: JsonObject = {};
  for (const [key, field] of Object.entries(json as JsonObject)) if (key !== "title") setOwn(fields, key, field);
  const title = contents.get("title", true);
  const text = YAML.isScalar(title) ? scalarTitle(title) : "";
  return text === "" ? { fields } : { title: text, fields };
}

/** A front matter title's text: a string, or a number or boolean as written (`title: 3.10` is "3.10", not "3.1"); "" for anything else. */
function scalarTitle(scalar: Scalar): string {
  const { value } = scalar;
  if (typeof value === "string") return oneLine(value);
  return typeof value === "number" || typeof value === "boolean" ? oneLine(scalar.source ?? String(value)) : "";
}

/**
 * The text blocks of a tree, in order, and the text of its first heading that has any. Iterative,
 * not recursive: a file of 10,000 nested blockquotes would overflow the call stack.
 */
function treeBlocks(tree: Root): { blocks: string[]; heading?: string } {
  const blocks: string[] = [];
  let heading: string | undefined;
  const stack: Nodes[] = [tree];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.type === "heading") {
      const text = oneLine(inlineText(node));
      heading ??= text || undefined;
      blocks.push(text);
    } else if (node.type === "paragraph") blocks.push(...paragraphBlocks(inlineText(node)));
    else if (node.type === "code") blocks.push(node.value);
    // (front matter, HTML, link definitions and thematic breaks have no children: no text)
    else if ("children" in node) stack.push(...[...(node as Parent).children].reverse() as Nodes[]);
  }
  return heading === undefined ? { blocks } : { blocks, heading };
}

/**
 * A paragraph's blocks: one, its lines joined by spaces; or, when it is a GFM table (its second
 * line a delimiter row such as `|---|:--:|`: GFM tables are not CommonMark, so the parser leaves
 * them as text), a block per row, with its cells between ` | `. A hard line break, which
 * inlineText gives as a blank line, ends a block either way.
 */
function paragraphBlocks(text: string): string[] {
  const lines = text.split("\n");
  const delimiter = lines[1] ?? "";
  const table = `${lines[0] ?? ""}${delimiter}`.includes("|") && cells(delimiter).every((cell) => /^:?-+:?$/.test(cell));
  if (!table) return text.split("\n\n").map(oneLine);
  return lines.filter((_, i) => i !== 1).map((row) => cells(row).join(" | "));
}

/** A table row's cells: split at `|`, without the pipes at its ends, each on one line. */
function cells(row: string): string[] {
  return oneLine(row).replace(/^\|/, "").replace(/\|$/, "").split("|").map(oneLine);
}

/** The text of a node's inline content: links' text, images' alt text, code's text; HTML tags dropped; a hard break as a blank line. */
function inlineText(node: Nodes): string {
  let text = "";
  const stack: Nodes[] = [node];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (next.type === "text" || next.type === "inlineCode") text += next.value;
    else if (next.type === "image" || next.type === "imageReference") text += next.alt ?? "";
    else if (next.type === "break") text += "\n\n";
    else if ("children" in next) stack.push(...[...(next as Parent).children].reverse() as Nodes[]);
  }
  return text;
}
