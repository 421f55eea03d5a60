import { describe, expect, it } from "vitest";
import { fileNameTitle, joinBlocks, readPlainText } from "../../../src/engine/files/plain-text.js";

describe("readPlainText", () => {
  it("titles the document with the file name, and joins each paragraph's hard-wrapped lines", () => {
    const text = "  First paragraph,\r\nwrapped at   forty columns.  \r\n\r\n\r\nSecond\rparagraph.\n \t \nThird.\n\n";
    expect(readPlainText(text, "notes/todo.txt")).toEqual({
      title: "todo",
      body: "First paragraph, wrapped at forty columns.\n\nSecond paragraph.\n\nThird.",
    });
  });

  it("reads an empty or blank file as an empty body", () => {
    expect(readPlainText("", "a.txt")).toEqual({ title: "a", body: "" });
    expect(readPlainText(" \n\n\t\r\n", "a.txt")).toEqual({ title: "a", body: "" });
  });
});

describe("fileNameTitle", () => {
  it.each([
    ["notes.txt", "notes"],
    ["archive.tar.gz", "archive.tar"],
    [".env", ".env"],
    ["README", "README"],
    ["dir/sub/Meeting notes.md", "Meeting notes"],
    ["dir\\win\\file.md", "file"],
  ])("%s → %s", (name, title) => {
    expect(fileNameTitle(name)).toBe(title);
  });
});

describe("joinBlocks", () => {
  it("trims blocks, drops empty ones and blank lines inside one, and separates them by one blank line", () => {
    expect(joinBlocks(["  a  ", "", "   ", "b\n\n  \nc  ", "d"])).toBe("a\n\nb\nc\n\nd");
    expect(joinBlocks([])).toBe("");
  });
});
