/** A document's bytes → its FileDocument, by kind, each reader loaded when first needed. */
import { decodeText } from "./decode.js";
import type { FileDocument } from "./document.js";
import type { FileKind } from "./kinds.js";

/** Reads a document (Markdown, text, HTML, PDF) of file `name`. Throws UnreadableFile when it cannot be read as its kind. */
export async function readDocument(kind: FileKind, bytes: Uint8Array, name: string): Promise<FileDocument> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (kind) {
    case "pdf":
      return (await import("./pdf.js")).readPdf(buffer, name);
    case "markdown":
      return (await import("./markdown.js")).readMarkdown(decodeText(buffer), name);
    case "html":
      return (await import("./html.js")).readHtml(decodeText(buffer), name);
    default:
      return (await import("./plain-text.js")).readPlainText(decodeText(buffer), name);
  }
}
