import { describe, expect, it } from "vitest";
import { UnreadableFile } from "../../../src/engine/files/document.js";
import { MAX_HTML_TAGS, readHtml } from "../../../src/engine/files/html.js";

const sentence = (i: number) => `Paragraph ${i} of the article is long enough, at well over one hundred and forty characters, for the reader view to count it as real content, the way a story is.`;
const page = (body: string, head = "<title>A page</title>") => `<!doctype html><html><head>${head}</head><body>${body}</body></html>`;

describe("readHtml", () => {
  it("titles the page with <title>, else the first <h1> (not an SVG's <title>), else the file name", async () => {
    expect((await readHtml(page("<p>x</p>", "<title>\n  Tom &amp; Jerry\n  — notes </title>"), "a.html")).title).toBe("Tom & Jerry — notes");
    expect((await readHtml(page('<svg><title>icon</title></svg><h1>The <em>real</em> one</h1><h1>Second</h1>', ""), "a.html")).title).toBe("The real one");
    expect((await readHtml(page("<p>x</p>", ""), "dir/My page.htm")).title).toBe("My page");
    expect(await readHtml("", "empty.html")).toEqual({ title: "empty", body: "" });
  });

  it("gives a short page's visible text in blocks, without scripts, styles, navigation or hidden elements", async () => {
    const body = [
      "<header><a href='/'>Site</a></header><nav><ul><li>Home</li><li>About</li></ul></nav>",
      "<main><article><header><h1>Notes   on\n tides</h1></header>",
      "<p>High tide &amp; low tide<br>twice a day &mdash; mostly.</p>",
      "<script>var hidden = 'script text';</script><style>p { color: red }</style><noscript>Enable JS</noscript>",
      "<template><p>template text</p></template><p hidden>hidden text</p><p style='display: none'>none text</p><div aria-hidden='true'>aria text</div>",
      "<ul><li>Moon</li><li>Sun <b>and</b> wind</li></ul>",
      "<table><tr><th>Place</th><th>Range</th></tr><tr><td>Bay of Fundy</td><td>16 m</td></tr></table>",
      "<pre>line one\n  line two</pre>",
      "<div>Inline <span>spans</span> stay <a href='#'>together</a></div><footer>Article footer</footer></article></main>",
      "<footer>© Site footer</footer>",
    ].join("");
    expect((await readHtml(page(body), "a.html")).body).toBe(
      [
        "Notes on tides",
        "High tide & low tide",
        "twice a day — mostly.",
        "Moon",
        "Sun and wind",
        "Place | Range",
        "Bay of Fundy | 16 m",
        "line one",
        "line two",
        "Inline spans stay together",
        "Article footer",
      ].join("\n\n"),
    );
  });

  it("gives an article page's article, as Readability finds it, in blocks", async () => {
    const body = [
      "<nav><a href='/'>Home</a> <a href='/about'>About</a></nav>",
      "<div class='sidebar'><h3>Related</h3><ul><li><a href='/1'>Other story</a></li><li><a href='/2'>More</a></li></ul></div>",
      `<article><h2>Section one</h2><p>${sentence(1)}</p><p>${sentence(2)}</p><h2>Section two</h2><p>${sentence(3)}</p><ul><li>A point</li><li>Another point</li></ul></article>`,
      "<footer class='footer'>Copyright and links</footer>",
    ].join("");
    const { title, body: text } = await readHtml(page(body, "<title>Story</title>"), "a.html");
    expect(title).toBe("Story");
    expect(text).toBe(["Section one", sentence(1), sentence(2), "Section two", sentence(3), "A point", "Another point"].join("\n\n"));
  });

  it.each([
    ["a fragment", "<h1>Heading</h1><p>One &amp; two</p>", "Heading\n\nOne & two"],
    ["a page without <html>, <head> or <body> tags", "<!doctype html><title>T</title><p>First<p>Second", "First\n\nSecond"],
    ["a page whose <body> tag is missing", "<html><head><title>T</title></head><p>Outside a body</p></html>", "Outside a body"],
    ["unclosed tags", "<html><body><div><p>one<p>two<ul><li>three<li>four", "one\n\ntwo\n\nthree\n\nfour"],
  ])("reads %s as a browser would show it", async (_, html, body) => {
    expect((await readHtml(html, "a.html")).body).toBe(body);
  });

  it("finds the article of a page without <html>, <head> or <body> tags (which linkedom leaves outside any body)", async () => {
    const html = `<!doctype html><title>T</title><div class="sidebar"><a href="/1">Other story</a></div><article><p>${sentence(1)}<p>${sentence(2)}<p>${sentence(3)}</article>`;
    expect(await readHtml(html, "a.html")).toEqual({ title: "T", body: [sentence(1), sentence(2), sentence(3)].join("\n\n") });
  });

  it("never runs the page's scripts", async () => {
    const html = page("<script>globalThis.ranScript = true</script><img src=x onerror='globalThis.ranScript = true'><body onload='globalThis.ranScript = true'><p>text</p>");
    expect((await readHtml(html, "a.html")).body).toBe("text");
    expect((globalThis as { ranScript?: boolean }).ranScript).toBeUndefined();
  });

  it("reads a page nested 10,000 elements deep, closed or not", async () => {
    const closed = page(`${"<div>".repeat(10_000)}<p>deep text</p>${"</div>".repeat(10_000)}`);
    expect((await readHtml(closed, "a.html")).body).toBe("deep text");
    expect((await readHtml(`${"<div><span>".repeat(10_000)}deep text`, "a.html")).body).toBe("deep text");
  });

  it("reads a 5 MB page, and a 5 MB page of unclosed tags", async () => {
    let posts = "";
    for (let i = 0; posts.length < 5_000_000; i++) posts += `<div class="post"><h2>Post ${i}</h2><p>${sentence(i)}</p><ul><li><a href="/a/${i}">link ${i}</a></li></ul></div>`;
    const { body } = await readHtml(page(posts), "big.html");
    expect(body.startsWith(`Post 0\n\n${sentence(0)}\n\nlink 0\n\nPost 1`)).toBe(true);
    expect(body.split("\n\n").length).toBe(3 * posts.split("<h2>").length - 3);
    const unclosed = await readHtml(page(posts.replaceAll("</div>", "").replaceAll("</p>", "")), "big.html");
    expect(unclosed.body).toBe(body);
  });

  it("refuses a page of more tags than it can build as a DOM in reasonable time", async () => {
    const error = await readHtml("<p>".repeat(MAX_HTML_TAGS + 1), "a.html").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnreadableFile);
    expect((error as UnreadableFile).reason).toBe("too many tags to read as HTML: 300,001 `<` (at most 300,000)");
  });
});
