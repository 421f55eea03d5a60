import { describe, expect, it } from "vitest";
import { csvObjects } from "../../../src/engine/objects/csv.js";
import { inputFormat } from "../../../src/engine/objects/input.js";
import { validationError } from "../../helpers/errors.js";

const rows = (text: string, format: "csv" | "tsv" = "csv") => csvObjects(text, "f.csv", format);
const failure = async (text: string, format: "csv" | "tsv" = "csv") => {
  try {
    await rows(text, format);
  } catch (error) {
    return validationError(() => {
      throw error;
    }).message;
  }
  throw new Error("accepted");
};

describe("csvObjects", () => {
  it("makes an object of each row, named by the header, each with the line its row starts on", async () => {
    const text = '\uFEFFid,title,note\r\n1,"Rain jacket, light","two\r\nlines"\r\n2,"say ""hi""",\r\n\r\n3,x,y\r\n';
    expect(await rows(text)).toEqual([
      { object: { id: "1", title: "Rain jacket, light", note: "two\nlines" }, where: "f.csv:2" },
      { object: { id: "2", title: 'say "hi"' }, where: "f.csv:4" }, // (an empty cell is no field)
      { object: { id: "3", title: "x", note: "y" }, where: "f.csv:6" },
    ]);
  });
  it("reads TSV with tabs, and keeps any header name as a field (even __proto__)", async () => {
    const [row] = await rows("__proto__\ttitle\nx\ty\n", "tsv");
    expect(Object.keys(row?.object ?? {})).toEqual(["__proto__", "title"]);
    expect(Object.getPrototypeOf(row?.object)).toBe(Object.prototype);
  });
  it("reads TSV as IANA's text/tab-separated-values: no quoting, a quote is a character like any other", async () => {
    const text = '\uFEFFid\ttitle\tnote\r\n1\tsay "hi"\t"quoted"\n\n2\t"open\ta"b\n3\t""\t\\t and \\n stay as typed\n';
    expect(await rows(text, "tsv")).toEqual([
      { object: { id: "1", title: 'say "hi"', note: '"quoted"' }, where: "f.csv:2" },
      { object: { id: "2", title: '"open', note: 'a"b' }, where: "f.csv:4" }, // (a quote opens nothing: the row ends at its line's end)
      { object: { id: "3", title: '""', note: "\\t and \\n stay as typed" }, where: "f.csv:5" },
    ]);
  });
  it("ends TSV rows at LF, CRLF or a lone CR (a classic Mac file), counting lines alike", async () => {
    expect(await rows("id\tt\r1\ta\r\r2\tb\r\n3\tc", "tsv")).toEqual([
      { object: { id: "1", t: "a" }, where: "f.csv:2" },
      { object: { id: "2", t: "b" }, where: "f.csv:4" },
      { object: { id: "3", t: "c" }, where: "f.csv:5" },
    ]);
  });
  it("refuses a TSV row of another length than the header, naming its line", async () => {
    expect(await failure('id\tt\n1\t"a\tb"\n', "tsv")).toBe("f.csv:2: the row has 3 fields, the header 2");
    expect(await failure("id\tt\n\n\n1\n", "tsv")).toBe("f.csv:4: the row has 1 field, the header 2");
  });
  it("says the line a row starts on, with LF or CRLF line ends and blank lines between rows", async () => {
    for (const end of ["\n", "\r\n"]) {
      const text = ["id,t", "", "3,x", '4,"a', 'b"', "", "", "5,y"].join(end);
      expect((await rows(text)).map((row) => row.where), JSON.stringify(end)).toEqual(["f.csv:3", "f.csv:4", "f.csv:8"]);
    }
  });
  it("a header alone is no object", async () => {
    expect(await rows("id,title\n")).toEqual([]);
  });
  it.each([
    ["id,title\n1,a,b\n", 'f.csv:2: the row has 3 fields, the header 2'],
    ["id,,x\n1,2,3\n", "f.csv:1: column 2 of the header has no name"],
    ["id,id\n1,2\n", 'f.csv:1: the header names "id" twice (columns must have distinct names)'],
    ['id,t\n1,"open\n', "f.csv:2: not valid CSV: a quoted field is never closed (the file ends inside quotes)"],
    ['id,t\n1,"a"b\n', 'f.csv:2: not valid CSV: a quote ends a field but other characters follow it (inside a quoted field, write a quote as "")'],
  ])("refuses %j: %s", async (text, message) => {
    expect(await failure(text)).toBe(message);
  });
});

describe("inputFormat", () => {
  it("is the one given, else a path's .csv or .tsv extension, else JSON", () => {
    expect(inputFormat({ source: "x", path: "a/B.CSV" })).toBe("csv");
    expect(inputFormat({ source: "x", path: "b.tsv" })).toBe("tsv");
    expect(inputFormat({ source: "x", path: "c.jsonl" })).toBe("json");
    expect(inputFormat({ source: "x", text: "a,b" })).toBe("json");
    expect(inputFormat({ source: "x", path: "d.csv", format: "json" })).toBe("json");
  });
});
