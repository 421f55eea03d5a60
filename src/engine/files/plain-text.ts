/**
 * A plain text file (`.txt`, or any extension named with `--ext`) → a FileDocument: the title is
 * the file name without its extension, the body the text in blocks. Also the two rules every
 * reader shares: a title from a file name, and blocks joined into a body. Pure.
 */
import path from "node:path";
import type { FileDocument } from "./document.js";

/** The title a file name gives: its base name without the last extension (`notes.tar.gz` → `notes.tar`, `.env` → `.env`). */
export function fileNameTitle(fileName: string): string {
  return path.posix.parse(fileName.replaceAll("\\", "/")).name;
}

/**
 * A body from blocks of text: each trimmed, empty ones dropped, separated by one blank line, so
 * no block's text ever holds a blank line of its own (segments and highlights end at newlines).
 */
export function joinBlocks(blocks: Iterable<string>): string {
  const kept: string[] = [];
  for (const block of blocks) {
    const text = block
      .split("\n")
      .map((line) => line.trimEnd())
      .filter((line) => line.trim() !== "")
      .join("\n")
      .trim();
    if (text !== "") kept.push(text);
  }
  return kept.join("\n\n");
}

/** One line of a block: its lines joined by a space and runs of spaces collapsed (as a browser shows a paragraph). */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * A plain text file's document. Line ends (CRLF, CR) become LF; paragraphs are separated by blank
 * lines (lines of white space only count as blank), and a paragraph's hard-wrapped lines are joined
 * into one line by a space.
 */
export function readPlainText(text: string, fileName: string): FileDocument {
  const paragraphs = text.replace(/\r\n?/g, "\n").split(/\n\s*\n/);
  return { title: fileNameTitle(fileName), body: joinBlocks(paragraphs.map(oneLine)) };
}
