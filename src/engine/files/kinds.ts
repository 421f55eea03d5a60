/** Which reader a file found in a folder goes to, by its extension (case ignored). Pure. */
import path from "node:path";

export type FileKind = "markdown" | "text" | "html" | "pdf" | "json" | "jsonl" | "csv" | "tsv" | "image";

const BY_EXTENSION: Record<string, FileKind> = {
  md: "markdown",
  markdown: "markdown",
  txt: "text",
  text: "text",
  html: "html",
  htm: "html",
  pdf: "pdf",
  json: "json",
  jsonl: "jsonl",
  ndjson: "jsonl",
  csv: "csv",
  tsv: "tsv",
  jpg: "image",
  jpeg: "image",
  png: "image",
  webp: "image",
  gif: "image",
  tif: "image",
  tiff: "image",
  avif: "image",
};

/** A file's lower-case extension without the dot ("" when it has none). */
export function extensionOf(file: string): string {
  return path.posix.extname(file).slice(1).toLowerCase();
}

/** The kind of a file, or null for a format semsearch does not read (`textExtensions` are read as plain text). */
export function fileKind(file: string, textExtensions: readonly string[]): FileKind | null {
  const extension = extensionOf(file);
  if (textExtensions.some((given) => given.replace(/^\./, "").toLowerCase() === extension)) return "text";
  return Object.hasOwn(BY_EXTENSION, extension) ? (BY_EXTENSION[extension] as FileKind) : null;
}

/** Kinds whose objects are the file's own (JSON, CSV): their ids come from their content, not the path. */
export function holdsObjects(kind: FileKind): boolean {
  return kind === "json" || kind === "jsonl" || kind === "csv" || kind === "tsv";
}

/**
 * Whether `objects add` reads a file named on its command line as a file (one object per document,
 * with the file fields) rather than as JSON or CSV input: Markdown, text, HTML, PDF, images, and the
 * extensions given as text.
 */
export function readsAsDocument(file: string, textExtensions: readonly string[]): boolean {
  const kind = fileKind(file, textExtensions);
  return kind !== null && !holdsObjects(kind);
}
