/**
 * A PDF file → a FileDocument, read by pdf.js (`pdfjs-dist`'s legacy build, the one for Node),
 * loaded only when a PDF is read. Text only: no worker thread (in Node pdf.js runs its worker's code
 * in this thread, importing `pdf.worker.mjs` from its own folder), no fonts loaded or looked up on
 * the system, no WebAssembly decoders, no `eval`, nothing fetched from the network (character
 * maps and font metrics are read from pdfjs-dist's folder), nothing printed. pdf.js does
 * need `@napi-rs/canvas` (see loadPdfjs).
 *
 * - body: each page's text; a line ends where pdf.js says one does (`hasEOL`), and lines are
 *   joined into a paragraph unless the gap above a line is more than 1.5 times its height, or its
 *   text is of another size (a heading), or it starts higher up than the line before (a new
 *   column). A line ending in a hyphen after a letter is joined without a space ("exam-" "ple" →
 *   "exam-ple"). Paragraphs and pages are separated by a blank line.
 * - fields: `pages`, the page count; `page_starts`, where each page's text starts in the body
 *   (`body.slice(page_starts[i])` starts with page i + 1's text; a page without text starts where
 *   the next one does).
 * - title: the document's Title (its Info dictionary), else its first line of text, else the file name.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { UnreadableFile, type FileDocument } from "./document.js";
import { fileNameTitle, joinBlocks, oneLine } from "./plain-text.js";

/** One line of a page's text, with where it sits (PDF units, y upwards) and how tall its text is. */
interface Line {
  text: string;
  y: number;
  height: number;
}

/** The parts of pdf.js's text items this module reads. */
interface TextItem {
  str: string;
  hasEOL: boolean;
  transform: number[];
  height: number;
}

/** A PDF's document. Throws UnreadableFile when it is not a PDF pdf.js can read, or is encrypted. */
export async function readPdf(bytes: Buffer, fileName: string): Promise<FileDocument> {
  const pdfjs = await loadPdfjs();
  const task = pdfjs.getDocument({
    // (a copy, as a Uint8Array: pdf.js prints a deprecation to stdout when given a Buffer)
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    useWasm: false,
    // (read from pdfjs-dist's own folders: character maps turn the codes of CJK fonts that use a
    // predefined CMap into text; the standard fonts' metrics place the spaces between words of a
    // PDF that does not embed its Helvetica or Times)
    cMapUrl: packageFolder("cmaps"),
    cMapPacked: true,
    standardFontDataUrl: packageFolder("standard_fonts"),
    verbosity: pdfjs.VerbosityLevel.ERRORS,
  });
  const pages: Line[][] = [];
  let title: unknown;
  try {
    const pdf = await task.promise;
    for (let number = 1; number <= pdf.numPages; number++) {
      const page = await pdf.getPage(number);
      const { items } = await page.getTextContent();
      pages.push(pageLines(items.filter((item) => "str" in item) as TextItem[]));
      page.cleanup();
    }
    title = ((await pdf.getMetadata()).info as { Title?: unknown }).Title;
  } catch (error) {
    // (pdf.js names its exceptions; PasswordException is not exported to test with instanceof)
    if (error instanceof Error && error.name === "PasswordException") throw new UnreadableFile("the PDF is encrypted (password protected)");
    throw new UnreadableFile(`not a valid PDF: ${sentence(error)}`);
  } finally {
    await task.destroy();
  }
  const { body, pageStarts } = pagesBody(pages);
  const firstLine = pages.find((lines) => lines.length > 0)?.[0]?.text ?? "";
  return {
    title: (typeof title === "string" ? oneLine(title) : "") || firstLine || fileNameTitle(fileName),
    body,
    fields: { pages: pages.length, page_starts: pageStarts },
  };
}

/**
 * pdf.js, or UnreadableFile when it cannot load. It needs a global DOMMatrix as it loads (one of its
 * constants is one, and it builds them for Type 3 fonts' glyphs), which Node does not have: it
 * takes the one of `@napi-rs/canvas`, its optional dependency, and fails without it (pdf.js issue
 * 21720), after printing warnings to stderr.
 */
async function loadPdfjs(): Promise<typeof import("pdfjs-dist/legacy/build/pdf.mjs")> {
  try {
    return await import("pdfjs-dist/legacy/build/pdf.mjs");
  } catch (error) {
    throw new UnreadableFile(`PDF text cannot be read here: pdf.js did not load (${sentence(error)}); it needs the package @napi-rs/canvas, an optional dependency that was not installed or does not run on this system`, "unreadable");
  }
}

/** A folder of the pdfjs-dist package, as pdf.js wants it in Node: a path, with a final separator. */
function packageFolder(name: string): string {
  const root = path.dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json"));
  return path.join(root, name) + path.sep;
}

/** An error's message as part of a sentence: no final period, no capital unless it starts a name ("PDF"). */
function sentence(error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).replace(/\.$/, "");
  return /^\p{Lu}\p{Ll}/u.test(message) ? message[0]?.toLowerCase() + message.slice(1) : message;
}

/** A page's lines from its text items: the items up to one that ends a line, each line's text on one line. */
function pageLines(items: TextItem[]): Line[] {
  const lines: Line[] = [];
  let line: Line | undefined;
  for (const item of items) {
    line ??= { text: "", y: item.transform[5] ?? 0, height: 0 };
    line.text += item.str;
    line.height = Math.max(line.height, Math.abs(item.height));
    if (item.hasEOL) {
      lines.push({ ...line, text: oneLine(line.text) });
      line = undefined;
    }
  }
  if (line) lines.push({ ...line, text: oneLine(line.text) });
  return lines.filter((l) => l.text !== "");
}

/** The blocks of a page: its lines joined into paragraphs (see the module's comment). */
function pageBlocks(lines: Line[]): string[] {
  const blocks: string[] = [];
  let previous: Line | undefined;
  for (const line of lines) {
    if (previous === undefined || startsParagraph(previous, line)) blocks.push(line.text);
    else {
      const last = blocks.pop() ?? "";
      blocks.push(/\p{L}-$/u.test(last) ? `${last}${line.text}` : `${last} ${line.text}`);
    }
    previous = line;
  }
  return blocks;
}

/** Whether `line`, after `previous` on the same page, starts a new paragraph. */
function startsParagraph(previous: Line, line: Line): boolean {
  const height = Math.max(previous.height, line.height);
  const gap = previous.y - line.y;
  const otherSize = Math.abs(previous.height - line.height) > 0.2 * height;
  return gap <= 0 || gap > 1.5 * height || otherSize;
}

/** The body from each page's lines, and the offset in it where each page's text starts. */
function pagesBody(pages: Line[][]): { body: string; pageStarts: number[] } {
  let body = "";
  const pageStarts: number[] = [];
  const empty: number[] = [];
  for (const lines of pages) {
    const text = joinBlocks(pageBlocks(lines));
    // (a page without text starts where the next page's text does: set once that is known)
    if (text === "") {
      empty.push(pageStarts.length);
      pageStarts.push(-1);
      continue;
    }
    if (body !== "") body += "\n\n";
    for (const i of empty.splice(0)) pageStarts[i] = body.length;
    pageStarts.push(body.length);
    body += text;
  }
  for (const i of empty) pageStarts[i] = body.length;
  return { body, pageStarts };
}
