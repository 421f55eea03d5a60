import PDFDocument from "pdfkit";
import { afterEach, describe, expect, it, vi } from "vitest";
import { UnreadableFile } from "../../../src/engine/files/document.js";
import { readPdf } from "../../../src/engine/files/pdf.js";

type Page = (doc: PDFKit.PDFDocument) => void;

/** A PDF made by pdfkit: one page per function, which writes on it. */
function makePdf(pages: Page[], options: PDFKit.PDFDocumentOptions = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ ...options, autoFirstPage: false });
    const chunks: Buffer[] = [];
    doc.on("data", (chunk: Buffer) => chunks.push(chunk));
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
    for (const page of pages) {
      doc.addPage();
      page(doc);
    }
    doc.end();
  });
}

const reason = async (bytes: Buffer): Promise<string> => {
  const error = await readPdf(bytes, "f.pdf").catch((e: unknown) => e);
  expect(error).toBeInstanceOf(UnreadableFile);
  return (error as UnreadableFile).reason;
};

const wrapped = "A paragraph long enough to wrap over several lines of the page, so that the reader has to join the lines it is given back into the one paragraph they were.";

describe("readPdf", () => {
  it("reads each page's text in paragraphs, says where each page starts, and takes the metadata title", async () => {
    const bytes = await makePdf(
      [
        (doc) => doc.fontSize(20).text("Big heading").fontSize(11).text(`${wrapped} ${wrapped}`).moveDown().text("A second para-").text("graph, after a gap."),
        () => {}, // (a page without text)
        (doc) => doc.fontSize(11).text("Last page."),
      ],
      { info: { Title: "  The metadata title " } },
    );
    const document = await readPdf(bytes, "report.pdf");
    expect(document.title).toBe("The metadata title");
    const first = ["Big heading", `${wrapped} ${wrapped}`, "A second para-graph, after a gap."].join("\n\n");
    expect(document.body).toBe(`${first}\n\nLast page.`);
    expect(document.fields).toEqual({ pages: 3, page_starts: [0, first.length + 2, first.length + 2] });
  });

  it("titles a PDF without a metadata title with its first line, or its file name when it has no text", async () => {
    const bytes = await makePdf([(doc) => doc.fontSize(11).text(`First line of text\n${wrapped}`)]);
    expect((await readPdf(bytes, "a.pdf")).title).toBe("First line of text");
    const blank = await readPdf(await makePdf([() => {}, () => {}]), "dir/scan 12.pdf");
    expect(blank).toEqual({ title: "scan 12", body: "", fields: { pages: 2, page_starts: [0, 0] } });
  });

  it("says where each of 100 pages starts", async () => {
    const bytes = await makePdf(Array.from({ length: 100 }, (_, i): Page => (doc) => doc.fontSize(11).text(`Page ${i + 1} begins here.`).moveDown().text(wrapped)));
    const { body, fields } = await readPdf(bytes, "long.pdf");
    const starts = fields?.page_starts as number[];
    expect(fields?.pages).toBe(100);
    starts.forEach((start, i) => expect(body.slice(start).startsWith(`Page ${i + 1} begins here.\n\n${wrapped}`), `page ${i + 1}`).toBe(true));
  });

  it("refuses a file that is not a PDF, a truncated PDF and an empty file, saying why", async () => {
    expect(await reason(Buffer.from("name,price\nrain jacket,80\n"))).toBe("not a valid PDF: invalid PDF structure");
    const whole = await makePdf([(doc) => doc.text(wrapped)]);
    expect(await reason(whole.subarray(0, Math.floor(whole.length / 2)))).toMatch(/^not a valid PDF: /);
    expect(await reason(Buffer.alloc(0))).toBe("not a valid PDF: the PDF file is empty, i.e. its size is zero bytes");
  });

  it("refuses an encrypted PDF", async () => {
    const bytes = await makePdf([(doc) => doc.text("secret")], { userPassword: "u", ownerPassword: "o", pdfVersion: "1.7" });
    expect(await reason(bytes)).toBe("the PDF is encrypted (password protected)");
  });

  it("prints nothing, on stdout or stderr, for a good or a broken PDF", async () => {
    const writes: string[] = [];
    const capture = (chunk: unknown) => {
      writes.push(String(chunk));
      return true;
    };
    const stdout = vi.spyOn(process.stdout, "write").mockImplementation(capture);
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(capture);
    const logs = ["log", "info", "warn", "error", "debug"].map((name) => vi.spyOn(console, name as "log").mockImplementation((...args) => void writes.push(args.join(" "))));
    try {
      await readPdf(await makePdf([(doc) => doc.font("Times-Roman").text(wrapped)]), "a.pdf");
      await readPdf(Buffer.from("%PDF-1.4\n1 0 obj garbage"), "b.pdf").catch(() => undefined);
    } finally {
      for (const spy of [stdout, stderr, ...logs]) spy.mockRestore();
    }
    expect(writes).toEqual([]);
  });
});

describe("readPdf without pdf.js", () => {
  afterEach(() => {
    vi.doUnmock("pdfjs-dist/legacy/build/pdf.mjs");
    vi.resetModules();
  });

  it("says a PDF cannot be read here when pdf.js does not load (as without @napi-rs/canvas)", async () => {
    vi.resetModules();
    vi.doMock("pdfjs-dist/legacy/build/pdf.mjs", () => {
      throw new ReferenceError("DOMMatrix is not defined");
    });
    // (fresh modules, document.js's class among them)
    const { readPdf: read } = await import("../../../src/engine/files/pdf.js");
    const { UnreadableFile: Unreadable } = await import("../../../src/engine/files/document.js");
    const error = await read(await makePdf([(doc) => doc.text("x")]), "a.pdf").catch((e: unknown) => e);
    // (vitest wraps the factory's error in its own, so the DOMMatrix message is not seen here)
    expect(error).toBeInstanceOf(Unreadable);
    expect((error as UnreadableFile).reason).toMatch(/^PDF text cannot be read here: pdf.js did not load \(.+\); it needs the package @napi-rs\/canvas, /);
  });
});
