import { describe, expect, it } from "vitest";
import { UnreadableFile } from "../../../src/engine/files/document.js";
import { readMarkdown } from "../../../src/engine/files/markdown.js";

const reason = async (text: string): Promise<string> => {
  try {
    await readMarkdown(text, "f.md");
  } catch (error) {
    expect(error).toBeInstanceOf(UnreadableFile);
    return (error as UnreadableFile).reason;
  }
  throw new Error("read");
};

describe("readMarkdown", () => {
  it("makes fields of the front matter, takes its title, and leaves it out of the body", async () => {
    const text = [
      "---",
      "title: Trip notes",
      "date: 2024-05-01",
      "tags: [travel, 'rain']",
      "rating: 4.5",
      "draft: false",
      "nothing: ~",
      "---",
      "",
      "# Day one",
      "",
      "It rained.",
    ].join("\n");
    expect(await readMarkdown(text, "trip.md")).toEqual({
      title: "Trip notes",
      body: "Day one\n\nIt rained.",
      fields: { date: "2024-05-01", tags: ["travel", "rain"], rating: 4.5, draft: false, nothing: null },
    });
  });

  it("titles the document with the first heading that has text, else the file name", async () => {
    expect((await readMarkdown("Intro\n\n#\n\n## The *real* `title`\n\n# Second", "a.md")).title).toBe("The real title");
    expect((await readMarkdown("Just text.", "notes/plain.md")).title).toBe("plain");
    expect(await readMarkdown("", "empty.markdown")).toEqual({ title: "empty", body: "" });
  });

  it("takes a number or boolean title as written, and falls back to the heading for any other", async () => {
    expect((await readMarkdown("---\ntitle: 3.10\n---\n# H", "a.md")).title).toBe("3.10");
    expect((await readMarkdown("---\ntitle: 1984\n---\n# H", "a.md")).title).toBe("1984");
    const listTitle = await readMarkdown("---\ntitle: [a, b]\nx: 1\n---\n# H", "a.md");
    expect(listTitle).toEqual({ title: "H", body: "H", fields: { x: 1 } });
    expect((await readMarkdown("---\ntitle: '  '\n---\n# H", "a.md")).title).toBe("H");
  });

  it("turns values JSON cannot hold into null, and keys that are not text into text", async () => {
    const { fields } = await readMarkdown("---\ninf: .inf\nnan: .NaN\nlist: [1, -.inf]\n1: one\n~: none\nwhen: 2024-01-02T10:00:00Z\n---\n", "a.md");
    expect(fields).toEqual({ inf: null, nan: null, list: [1, null], "1": "one", "": "none", when: "2024-01-02T10:00:00Z" });
  });

  it("keeps a __proto__ key as a field of its own, without touching any prototype", async () => {
    const { fields } = await readMarkdown("---\n__proto__: {polluted: yes}\n---\n", "a.md");
    expect(Object.keys(fields ?? {})).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("reads an empty front matter, or one of comments only, as no fields", async () => {
    expect(await readMarkdown("---\n---\nText", "a.md")).toEqual({ title: "a", body: "Text" });
    expect(await readMarkdown("---\n# a comment\n---\nText", "a.md")).toEqual({ title: "a", body: "Text" });
  });

  it.each([
    ["invalid YAML", "---\ntitle: ok\nbad: [1,\n---\n", "front matter: line 3: Flow sequence in block collection must be sufficiently indented and end with a ]"],
    ["a repeated key", "---\na: 1\nb: 2\na: 3\n---\n", "front matter: line 4: Map keys must be unique"],
    ["a list", "---\n- a\n- b\n---\n", "front matter: line 2: a list, not a mapping of keys to values (`key: value` lines)"],
    ["a single value", "---\n\njust text\n---\n", "front matter: line 3: a single value, not a mapping of keys to values (`key: value` lines)"],
    ["an alias to no anchor", "---\na: *nowhere\n---\n", "front matter: line 2: Unresolved alias (the anchor must be set before the alias): nowhere"],
  ])("refuses front matter that is %s, naming the line of the file", async (_, text, expected) => {
    expect(await reason(text)).toBe(expected);
  });

  it("refuses an alias bomb rather than expand it", async () => {
    const rows = ["a: &a [x, x, x, x, x, x, x, x, x]"];
    for (const [name, prev] of [["b", "a"], ["c", "b"], ["d", "c"], ["e", "d"], ["f", "e"]]) rows.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(", ")}]`);
    expect(await reason(`---\n${rows.join("\n")}\n---\n`)).toMatch(/^front matter: line 2: Excessive alias count/);
  });

  it("gives the text without markup, one block per heading, paragraph, list item and code block", async () => {
    const text = [
      "# Title with [a link](https://example.com) and ![an image](i.png)",
      "",
      "A paragraph with *emphasis*, **strong**, `code`, <kbd>Ctrl</kbd> and",
      "a soft line break. An autolink <https://x.org> and a [reference][ref].",
      "",
      "[ref]: https://example.com/ref",
      "",
      "Setext heading",
      "--------------",
      "",
      "- first item",
      "  wrapped",
      "- second item",
      "  1. nested &amp; numbered",
      "",
      "> Quoted paragraph",
      "> on two lines.",
      ">",
      "> Second quoted paragraph.",
      "",
      "***",
      "",
      "```js",
      "const x = 1;",
      "",
      "call(x);",
      "```",
      "",
      "    indented code",
    ].join("\n");
    expect((await readMarkdown(text, "a.md")).body).toBe(
      [
        "Title with a link and an image",
        "A paragraph with emphasis, strong, code, Ctrl and a soft line break. An autolink https://x.org and a reference.",
        "Setext heading",
        "first item wrapped",
        "second item",
        "nested & numbered",
        "Quoted paragraph on two lines.",
        "Second quoted paragraph.",
        "const x = 1;\ncall(x);",
        "indented code",
      ].join("\n\n"),
    );
  });

  it("drops an HTML block whole, and keeps the Markdown between HTML blocks", async () => {
    const text = '<p align="center">\n  <img src="logo.png">\n  Tagline\n</p>\n\n<details>\n<summary>More</summary>\n\nHidden *text*.\n\n</details>\n\n<!-- a comment -->\nAfter.';
    expect((await readMarkdown(text, "a.md")).body).toBe("Hidden text.\n\nAfter.");
  });

  it("ends a block at a hard line break", async () => {
    expect((await readMarkdown("Roses are red,  \nviolets are blue,\\\nend\nhere.", "a.md")).body).toBe("Roses are red,\n\nviolets are blue,\n\nend here.");
  });

  it("makes each row of a (GFM) table a block of its cells", async () => {
    const text = "| Name | Age |\n|:-----|----:|\n| *Ann* | 42 |\n| Bob | 7 |\n\nName | Age\n--- | ---\nCy | 1";
    expect((await readMarkdown(text, "a.md")).body).toBe("Name | Age\n\nAnn | 42\n\nBob | 7\n\nName | Age\n\nCy | 1");
  });

  it("reads blockquotes nested 10,000 deep (without overflowing the call stack)", async () => {
    expect((await readMarkdown(`${">".repeat(10_000)} deep *text*`, "a.md")).body).toBe("deep text");
  });

  it("reads CRLF line ends as LF", async () => {
    expect(await readMarkdown("---\r\ntitle: T\r\nk: v\r\n---\r\n# H\r\n\r\nline one\r\nline two\r\n", "a.md")).toEqual({
      title: "T",
      body: "H\n\nline one line two",
      fields: { k: "v" },
    });
  });
});
