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
