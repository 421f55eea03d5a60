/**
 * What a file of a known format becomes before it is an object (issue 29): its title, its text and
 * any fields the format carries (Markdown front matter, a PDF's page offsets). The readers
 * (markdown.ts, html.ts, pdf.ts, plain-text.ts) each make one from a file's content; file-object.ts
 * adds the fields every file-derived object has (path, ext, size, modified, hash).
 */
import type { JsonObject } from "../types.js";

export interface FileDocument {
  /** The document's title, when the format gives one (front matter, `<title>`, a first heading, PDF metadata, a first line). */
  title?: string;
  /**
   * The text without markup. Blocks (paragraphs, headings, list items, table rows, pages) are
   * separated by a blank line, and a paragraph's lines are joined into one line: segments end at a
   * newline (segment.ts), so a heading is its own segment and a highlight never spans two blocks.
   */
  body: string;
  /** Further fields: Markdown front matter keys, a PDF's `pages` (count) and `page_starts` (offset in `body` where each page begins). */
  fields?: JsonObject;
}

/**
 * Why a file (or folder) was skipped, in a word a program can count by (the reason says it for a
 * person): `format` not a format semsearch reads; `encoding` binary or not UTF-8 text; `size` over
 * `--max-file-size`; `image` an image without an image index; `invalid` not valid as its format (a
 * corrupt PDF, bad front matter, a malformed JSON or CSV file); `limit` its reading went over a limit
 * (processor time, memory, tags); `unreadable` it could not be read (permission, a broken link, a
 * pipe, a name that is not UTF-8); `id` one of its ids is another file's, or its path cannot be an
 * id; `project` a semsearch project's folder.
 */
export type SkipKind = "format" | "encoding" | "size" | "image" | "invalid" | "limit" | "unreadable" | "id" | "project";

/** A file that cannot be read as its format (corrupt, encrypted, not text): it is skipped with this reason, and the others are added. */
export class UnreadableFile extends Error {
  constructor(
    readonly reason: string,
    readonly kind: SkipKind = "invalid",
  ) {
    super(reason);
    this.name = "UnreadableFile";
  }
}
