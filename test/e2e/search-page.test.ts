/**
 * The search page of `semsearch serve`, in a real browser (Debian's Chromium driven by
 * playwright-core) against the real server on real projects: a text index over the sample articles
 * and objects with emoji and combining marks (keys, a read-only one), and an image index over the
 * fixture images (the tiny CLIP fixture, served without keys on loopback).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, cliJson, ROOT, runCli, tempProject, userEnv } from "../helpers/cli.js";
import { articlesProject, HAVE_BROWSER, launchBrowser, openTab, screenshot } from "../helpers/browser.js";
import { call, serve, type Served } from "../helpers/serve.js";
import { tempDir } from "../helpers/temp.js";

// The functions passed to page.evaluate run in the browser: its globals, untyped here (the Node
// program has no DOM types, and adding them to it would hide mistakes in the server's code).
declare const document: any, window: any, sessionStorage: any;
declare function getComputedStyle(element: any): any;
type HTMLElement = any;
type HTMLInputElement = any;
type HTMLImageElement = any;
type HTMLDialogElement = any;
type CanvasRenderingContext2D = any;
type Document = any;

const CLIP = path.join(ROOT, "fixtures", "models", "tiny-clip");
const IMAGES = path.join(ROOT, "fixtures", "images");
const AXE = readFileSync(path.join(ROOT, "node_modules", "axe-core", "axe.min.js"), "utf8");

/** Text whose offsets differ in code units, code points and graphemes: emoji (a ZWJ family, surrogate pairs) and combining marks. */
const UNICODE = {
  id: "unicode",
  title: "Festival notes 🎆",
  body: "Fireworks lit the harbour 🎆🎆 at midnight. The cafe\u0301 served cre\u0300me bru\u0302le\u0301e to every guest 👩‍👩‍👧 at the festival. Zoë's naïve poem about lanterns won a prize.",
  topic: "culture",
  year: 2021,
};

interface Hit {
  id: string;
  object: Record<string, unknown>;
  highlights?: { highlight_type?: string; references: { source: string; position: { start_char: number; end_char: number } }[]; highlight: { text: string } }[];
}

/** Resolves once the page has painted a search answer after `before` (the count it keeps on <html>). */
async function painted(page: Page, before: number): Promise<void> {
  await page.waitForFunction((n) => Number(document.documentElement.dataset.searched ?? 0) > n, before, { timeout: 30_000 });
}

async function searchedCount(page: Page): Promise<number> {
  return page.evaluate(() => Number(document.documentElement.dataset.searched ?? 0));
}

async function resultIds(page: Page): Promise<string[]> {
  return page.locator("#results > li").evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.id ?? ""));
}

/** axe-core's serious and critical findings on the page as it is now. */
async function accessibilityViolations(page: Page): Promise<string[]> {
  // (evaluated through the debugging protocol, which the page's CSP does not govern)
  await page.evaluate(AXE);
  const found = await page.evaluate(async () => {
    const result = await (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((violation) => ({ id: violation.id, impact: violation.impact, targets: violation.nodes.map((node) => node.target.join(" ")).slice(0, 5) }));
  });
  return found.filter((violation) => violation.impact === "serious" || violation.impact === "critical").map((violation) => `${violation.id} (${violation.impact}): ${violation.targets.join(", ")}`);
}

describe.skipIf(!HAVE_BROWSER)("the search page, with keys", () => {
  let browser: Browser;
  let server: Served;
  let reader = "";
  let writer = "";
  let project = "";
  let problems: string[] = [];

  /** A new tab at `pagePath`, the read-only key given through the key box (unless another, or none). */
  async function open(pagePath = "/", options: { key?: string | null; width?: number; dark?: boolean } = {}): Promise<Page> {
    const tab = await openTab(browser, `${server.url}${pagePath}`, { ...options, key: options.key === undefined ? reader : options.key });
    problems = tab.problems;
    return tab.page;
  }

  async function api(query: Record<string, string>): Promise<{ results: Hit[]; pagination: { page: number; pages: number } }> {
    // (the page's own request: highlights shown, not reordering the results)
    const params = new URLSearchParams({ object_fields: "*", result_fields: "highlights", highlights_rank: "false", limit: "10", ...query });
    const answer = await call(`${server.url}/v1/indexes/articles/search?${params}`, reader);
    expect(answer.status, answer.text).toBe(200);
    return answer.json;
  }

  beforeAll(async () => {
    ({ project, reader, writer } = await articlesProject([UNICODE], ["topic", "year"]));
    server = await serve(project);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("serves the page with a strict Content-Security-Policy, nothing from elsewhere, and --no-ui turns it off", async () => {
    const answer = await call(`${server.url}/`, null);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(answer.headers.get("content-security-policy")).toBe("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    expect(answer.text).toContain('<meta name="semsearch-auth" content="keys">');
    // Every address in the page is its own (no CDN, no web fonts).
    for (const file of [answer.text, (await call(`${server.url}/ui/app.js`, null)).text, (await call(`${server.url}/ui/app.css`, null)).text]) {
      expect(file).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    }
    // A revalidation costs nothing; unknown files under /ui are the API's 404.
    const again = await fetch(`${server.url}/ui/app.js`, { headers: { "if-none-match": answer.headers.get("etag") ?? "" } });
    expect([200, 304]).toContain(again.status);
    const etag = (await fetch(`${server.url}/ui/app.js`)).headers.get("etag") ?? "";
    expect((await fetch(`${server.url}/ui/app.js`, { headers: { "if-none-match": etag } })).status).toBe(304);
    expect((await call(`${server.url}/ui/../v1/indexes`, null)).status).toBe(404);
    expect((await call(`${server.url}/ui/nothing.js`, null)).json.errors[0].code).toBe("NOT_FOUND");
    expect((await call(`${server.url}/`, null, { method: "POST" })).status).toBe(405);
    // The page's own origin may call the API; another still may not.
    const host = new URL(server.url).host;
    expect((await call(`${server.url}/v1/indexes`, reader, { headers: { origin: `http://${host}` } })).status).toBe(200);
    expect((await call(`${server.url}/v1/indexes`, reader, { headers: { origin: "http://evil.example" } })).json.errors[0].code).toBe("ORIGIN_NOT_ALLOWED");
    // --no-ui: the API alone, and its own origin is a stranger again.
    const bare = await serve(project, ["--no-ui"]);
    try {
      expect((await call(`${bare.url}/`, null)).json.errors[0].code).toBe("NOT_FOUND");
      expect((await call(`${bare.url}/ui/app.js`, null)).status).toBe(404);
      expect((await call(`${bare.url}/v1/indexes`, reader)).status).toBe(200);
      expect((await call(`${bare.url}/v1/indexes`, reader, { headers: { origin: `http://${new URL(bare.url).host}` } })).status).toBe(403);
      expect(bare.stderr()).not.toContain('"event":"search page"');
    } finally {
      await bare.stop();
    }
    expect(server.stderr()).toContain(`"event":"search page","url":"${server.url}/"`);
  });

  it("asks for a key, refuses a wrong one with a clear message, and works with a read-only key", async () => {
    const page = await open("/", { key: "ssk_key_wrong_0000000000000000000000000000000000000000" });
    await expect.poll(() => page.locator("#key-message").textContent()).toContain("The server did not accept this key");
    expect(await page.locator("#search-form").isHidden()).toBe(true);
    problems.length = 0; // (the browser logs the refused request)
    await page.locator("#key").fill(reader);
    const before = await searchedCount(page);
    await page.locator("#key").press("Enter");
    await page.locator("#q").waitFor();
    expect(await page.locator("#index option").allTextContents()).toEqual([expect.stringMatching(/^articles \(idx_[a-z0-9]+\) · text · use-lite-512 · 41 objects$/)]);
    expect(await page.locator("#index-info").textContent()).toMatch(/ready · 41 searchable of 41 objects/);
    await page.locator("#q").fill("how do plants make energy");
    await painted(page, before);
    expect((await resultIds(page)).length).toBe(10);
    // The key is in the tab's session storage, never in the URL.
    expect(page.url()).not.toContain("ssk_");
    expect(await page.evaluate(() => sessionStorage.getItem("semsearch.key"))).toBe(reader);
    expect(problems).toEqual([]);
  });

  it("forgets a key revoked while the page is open, and asks again saying why", async () => {
    const temporary = await cliJson(project, ["keys", "create", "--name", "temporary", "--read-only"]);
    const page = await open(`/?index=articles&q=${encodeURIComponent("plants")}`, { key: temporary.key });
    await page.locator("#results > li").first().waitFor();
    await cliJson(project, ["keys", "revoke", temporary.id]);
    await page.locator("#q").fill("volcanoes");
    await page.locator("#key-form").waitFor();
    expect(await page.locator("#key-message").textContent()).toContain("The server did not accept this key");
    expect(await page.evaluate(() => sessionStorage.getItem("semsearch.key"))).toBe(null);
    expect(await page.locator("#search-form").isHidden()).toBe(true);
  });

  it("says so when the URL names an index the project does not have, and searches none until asked", async () => {
    const page = await open(`/?index=${encodeURIComponent("<b>gone</b>")}&q=plants`);
    await page.locator("#error").waitFor();
    expect(await page.locator("#error").textContent()).toBe('This project has no index "<b>gone</b>": showing articles.');
    expect(await page.locator("#results > li").count()).toBe(0);
    expect(await page.locator("#index option:checked").textContent()).toMatch(/^articles /);
    const before = await searchedCount(page);
    await page.locator("#q").press("Enter");
    await painted(page, before);
    expect((await resultIds(page)).length).toBe(10);
    expect(new URL(page.url()).searchParams.get("index")).toBe("articles");
  });

  it("searches as you type and shows the first result the API gives", async () => {
    const page = await open();
    await page.locator("#q").waitFor();
    const before = await searchedCount(page);
    await page.locator("#q").pressSequentially("chlorophyll sunlight", { delay: 20 });
    await painted(page, before);
    // (a search per pause: the last one painted is for the whole query)
    await expect.poll(async () => (await resultIds(page))[0]).toBe((await api({ query: "chlorophyll sunlight" })).results[0]?.id);
    expect((await resultIds(page))[0]).toBe("photosynthesis");
    expect(await page.locator("#results > li").first().locator(".score").textContent()).toMatch(/^score \d\.\d{3} · lexical \d\.\d{3} \(BM25 [\d.]+\) · vector \d\.\d{3} \(cosine [-\d.]+\)$/);
    expect(page.url()).toContain("q=chlorophyll+sunlight");
    expect(problems).toEqual([]);
  });

  it("never shows an older answer over a newer one: a slow search in flight is cancelled", async () => {
    const page = await open();
    await page.locator("#q").waitFor();
    // The server's answer to the first query is held back until the second one has been painted.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const slowSeen = new Promise<void>((resolve) => {
      void page.route("**/search?**", async (route) => {
        if (new URL(route.request().url()).searchParams.get("query") === "chlorophyll sunlight") {
          resolve();
          await held;
          await route.continue().catch(() => {}); // (the page has aborted it by now)
          return;
        }
        await route.continue();
      });
    });
    const failed = new Promise<string>((resolve) => page.on("requestfailed", (request) => request.url().includes("chlorophyll") && resolve(request.failure()?.errorText ?? "")));
    await page.locator("#q").fill("chlorophyll sunlight");
    await slowSeen;
    const before = await searchedCount(page);
    await page.locator("#q").fill("volcanoes and magma");
    await painted(page, before);
    const newer = await resultIds(page);
    expect(newer[0]).toBe((await api({ query: "volcanoes and magma" })).results[0]?.id);
    expect(await failed).toBe("net::ERR_ABORTED");
    release();
    // Whatever the held answer does now, the page keeps the newer results.
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0)));
    expect(await resultIds(page)).toEqual(newer);
    expect(await searchedCount(page)).toBe(before + 1);
    expect(page.url()).toContain("q=volcanoes+and+magma");
  });

  it("shows the object fields chosen in the options", async () => {
    const page = await open(`/?index=articles&q=${encodeURIComponent("energy")}`);
    await page.locator("#results > li").first().waitFor();
    await page.locator(".options summary").click();
    const before = await searchedCount(page);
    await page.locator("#fields").fill("topic, year");
    await page.locator("#fields").press("Tab");
    await painted(page, before);
    const shown = await page.locator("#results > li").first().locator(".fields dt").allTextContents();
    expect(shown).toEqual(["topic", "year"]);
    expect(problems).toEqual([]);
  });

  it("marks each highlight at its offsets, emoji and combining marks included", async () => {
    const query = "served every guest at the festival";
    const expected = (await api({ query })).results.find((hit) => hit.id === "unicode");
    const highlights = expected?.highlights ?? [];
    expect(highlights.length).toBeGreaterThan(0);
    const page = await open(`/?index=articles&q=${encodeURIComponent(query)}`);
    await page.locator('#results > li[data-id="unicode"] .highlight').first().waitFor();
    const shown = await page.locator('#results > li[data-id="unicode"] .highlight').evaluateAll((nodes) =>
      nodes.map((node) => {
        const text = node.querySelector(".text") as HTMLElement;
        const mark = text.querySelector("mark") as HTMLElement;
        const before = [...text.childNodes].slice(0, [...text.childNodes].indexOf(mark)).map((child) => child.textContent).join("");
        const after = [...text.childNodes].slice([...text.childNodes].indexOf(mark) + 1).map((child) => child.textContent).join("");
        return { source: node.querySelector(".source")?.textContent, before, marked: mark.textContent, after };
      }),
    );
    expect(shown.length).toBe(Math.min(3, highlights.length));
    shown.forEach((view, i) => {
      const { source, position } = highlights[i]!.references[0]!;
      const field = UNICODE[source as "title" | "body"];
      expect(view.source).toBe(source);
      expect(view.marked).toBe(field.slice(position.start_char, position.end_char));
      // the context is the field's own text either side of the span ("…" where it is cut)
      const before = view.before.replace(/^…/, "");
      const after = view.after.replace(/…$/, "");
      expect(field.slice(position.start_char - before.length, position.start_char)).toBe(before);
      expect(field.slice(position.end_char, position.end_char + after.length)).toBe(after);
    });
    // The sentence after the emoji, marked whole: offsets are UTF-16 code units, as the API counts them.
    const body = UNICODE.body;
    expect(shown.map((view) => view.marked)).toContain(body.slice(body.indexOf("The cafe"), body.indexOf("festival.") + "festival.".length));
    expect(problems).toEqual([]);
  });

  it("shows a filter error at the character at fault, as the CLI does", async () => {
    const filter = 'topic:"🎆" AND AND year:2019';
    const refused = await call(`${server.url}/v1/indexes/articles/search?${new URLSearchParams({ query: "notes", filter_query: filter })}`, reader);
    expect(refused.status).toBe(422);
    const column = refused.json.errors[0].issues[0].column as number;
    const page = await open(`/?index=articles&q=notes`);
    await page.locator("#filter").waitFor();
    await page.locator("#filter").fill(filter);
    await page.locator("#filter-error mark.error-at").waitFor();
    expect(await page.locator("#filter-error").getAttribute("role")).toBe("alert");
    expect(await page.locator("#filter-error").textContent()).toContain(refused.json.errors[0].message);
    // (the column counts UTF-16 code units: the emoji before it counts 2)
    expect(column).toBe(16);
    expect(await page.locator("#filter-error mark.error-at").textContent()).toBe(filter[column - 1]);
    expect(await page.locator("#filter").evaluate((input: HTMLInputElement) => [input.selectionStart, input.selectionEnd])).toEqual([column - 1, column]);
    expect(await page.locator("#filter-error code").textContent()).toBe(filter);
    expect(await page.locator("#filter").getAttribute("aria-invalid")).toBe("true");
    // Mended, the error goes and the results come.
    const before = await searchedCount(page);
    await page.locator("#filter").fill("year:>2019");
    await painted(page, before);
    expect(await page.locator("#filter-error").isHidden()).toBe(true);
    expect((await resultIds(page)).length).toBeGreaterThan(0);
  });

  it("pages with the response's own next, keeps the page in the URL, and the browser's Back returns", async () => {
    const query = "energy from food and light";
    const [first, second] = [await api({ query }), await api({ query, offset: "10" })];
    const page = await open(`/?index=articles&q=${encodeURIComponent(query)}`);
    await page.locator("#results > li").first().waitFor();
    expect(await resultIds(page)).toEqual(first.results.map((hit) => hit.id));
    expect(await page.locator("#summary").textContent()).toBe("41 results");
    expect(await page.locator("#position").textContent()).toBe(`Page 1 of ${first.pagination.pages}`);
    expect(await page.locator("#previous").isDisabled()).toBe(true);
    expect(await page.locator("#announcer").textContent()).toBe(`41 results; Page 1 of ${first.pagination.pages}; showing 10 results`);
    expect(await page.locator("#announcer").getAttribute("role")).toBe("status");
    let before = await searchedCount(page);
    await page.locator("#next").click();
    await painted(page, before);
    expect(await resultIds(page)).toEqual(second.results.map((hit) => hit.id));
    expect(new URL(page.url()).searchParams.get("page")).toBe("2");
    expect(await page.locator("#position").textContent()).toBe(`Page 2 of ${first.pagination.pages}`);
    before = await searchedCount(page);
    await page.goBack();
    await painted(page, before);
    expect(await resultIds(page)).toEqual(first.results.map((hit) => hit.id));
    expect(new URL(page.url()).searchParams.get("page")).toBe(null);
    // The last page has no Next.
    const last = await open(`/?index=articles&q=${encodeURIComponent(query)}&page=${first.pagination.pages}`);
    await last.locator("#results > li").first().waitFor();
    expect(await last.locator("#next").isDisabled()).toBe(true);
    expect((await resultIds(last)).length).toBe(41 - 10 * (first.pagination.pages - 1));
  });

  it("restores a bookmarked search, filter and page in a new tab (the key asked again, never in the URL)", async () => {
    const query = "energy from food and light";
    const expected = await api({ query, filter_query: "year:>=2015", offset: "10" });
    const bookmark = `/?index=articles&q=${encodeURIComponent(query)}&filter=${encodeURIComponent("year:>=2015")}&page=2`;
    const page = await open(bookmark);
    await page.locator("#results > li").first().waitFor();
    expect(await resultIds(page)).toEqual(expected.results.map((hit) => hit.id));
    expect(await page.locator("#q").inputValue()).toBe(query);
    expect(await page.locator("#filter").inputValue()).toBe("year:>=2015");
    expect(page.url()).toBe(`${server.url}${bookmark.replace("%20", "+").replaceAll("%20", "+")}`);
  });

  it("works from the keyboard alone", async () => {
    const page = await open(`/?index=articles&q=${encodeURIComponent("energy from food and light")}`, { key: null });
    // the key box has the focus
    await page.keyboard.type(reader);
    await page.keyboard.press("Enter");
    await page.locator("#results > li").first().waitFor();
    const active = () => page.evaluate(() => document.activeElement?.id ?? "");
    expect(await active()).toBe("q");
    await page.keyboard.press("ArrowDown");
    expect(await active()).toBe("result-0");
    await page.keyboard.press("j");
    await page.keyboard.press("ArrowDown");
    expect(await active()).toBe("result-2");
    await page.keyboard.press("k");
    expect(await active()).toBe("result-1");
    // Enter opens the result whole, Escape closes it and gives the focus back
    const id = (await resultIds(page))[1];
    await page.keyboard.press("Enter");
    await page.locator("#detail .json").first().waitFor();
    expect(await page.locator("#detail").evaluate((dialog) => (dialog as HTMLDialogElement).open)).toBe(true);
    expect(await page.locator("#detail .meta code").textContent()).toBe(id);
    expect(await page.locator("#detail table").textContent()).toMatch(/idx_\w+READYyes/);
    await page.keyboard.press("Escape");
    expect(await page.locator("#detail").evaluate((dialog) => (dialog as HTMLDialogElement).open)).toBe(false);
    expect(await active()).toBe("result-1");
    let before = await searchedCount(page);
    await page.keyboard.press("n");
    await painted(page, before);
    expect(new URL(page.url()).searchParams.get("page")).toBe("2");
    before = await searchedCount(page);
    await page.keyboard.press("p");
    await painted(page, before);
    expect(new URL(page.url()).searchParams.get("page")).toBe(null);
    await page.keyboard.press("/");
    expect(await active()).toBe("q");
    // the focus is visible
    await page.keyboard.press("ArrowDown");
    expect(await page.locator("#result-0").evaluate((button) => getComputedStyle(button).outlineStyle)).toBe("solid");
    expect(problems).toEqual([]);
  });

  it("has no serious accessibility violations, light and dark, at 1280 and 360 px; screenshots for a person", async () => {
    const query = "served every guest at the festival";
    for (const [width, dark] of [[1280, false], [360, false], [1280, true], [360, true]] as const) {
      const page = await open(`/?index=articles&q=${encodeURIComponent(query)}`, { width, dark });
      await page.locator("#results > li").first().waitFor();
      expect(await accessibilityViolations(page), `${width} px ${dark ? "dark" : "light"}`).toEqual([]);
      // Nothing wider than the window at 360 px.
      expect(await page.evaluate(() => document.documentElement.scrollWidth), `${width} px`).toBeLessThanOrEqual(width);
      await screenshot(page, "search-page", `results-${width}${dark ? "-dark" : ""}`);
      if (width === 360 && !dark) {
        await page.locator("#result-0").click();
        await page.locator("#detail .json").first().waitFor();
        expect(await accessibilityViolations(page), "the opened result").toEqual([]);
        await screenshot(page, "search-page", "result-360");
      }
      expect(problems).toEqual([]);
    }
    const page = await open("/", { key: null });
    expect(await accessibilityViolations(page), "the key box").toEqual([]);
    await screenshot(page, "search-page", "key-1280");
  });

  it("shows a building index's progress, refreshed until it is ready", async () => {
    // A server that starts no worker: the new index stays BUILDING until a worker runs.
    const replica = await serve(project, ["--no-worker"]);
    let worker: ChildProcess | null = null;
    try {
      const created = await call(`${replica.url}/v1/indexes`, writer, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "later", configuration: { index_type: { name: "text" } } }) });
      expect(created.status, created.text).toBe(202);
      expect((await call(`${replica.url}/v1/worker`, reader)).json.running).toBe(false);
      const { page } = await openTab(browser, `${replica.url}/?index=later`, { key: reader });
      await page.locator("#index-info progress").waitFor();
      expect(await page.locator("#index-info").textContent()).toMatch(/building · 0 searchable of 41 objects · 41 to index/);
      expect(await page.locator("#index option:checked").textContent()).toMatch(/^later \(idx_\w+\) · text · use-lite-512 · building 0\/41$/);
      worker = spawn(process.execPath, [BIN, "--project", project, "worker", "run", "--poll-ms", "100"], { env: userEnv(), stdio: "ignore" });
      await page.waitForFunction(() => /ready · 41 searchable of 41 objects/.test(document.getElementById("index-info")?.textContent ?? ""), undefined, { timeout: 120_000 });
      expect(await page.locator("#index-info progress").count()).toBe(0);
      expect(await page.locator("#index option:checked").textContent()).toMatch(/^later \(idx_\w+\) · text · use-lite-512 · 41 objects$/);
    } finally {
      worker?.kill("SIGTERM");
      await replica.stop();
    }
  });
});

describe.skipIf(!HAVE_BROWSER)("the search page of an image index, without keys", () => {
  let browser: Browser;
  let server: Served;

  beforeAll(async () => {
    const project = tempProject();
    const data = tempDir();
    cpSync(IMAGES, path.join(data, "pics"), { recursive: true });
    const objects = [
      { id: "red", caption: "a ripe tomato", photo: "pics/red.png" },
      { id: "green", caption: "a lawn in spring", photo: "pics/green.jpg" },
      { id: "blue", caption: "the open sea", photo: "pics/blue.webp" },
      { id: "flag", caption: "a flag", photos: ["pics/black.png", "pics/red-blue.png", "pics/yellow.gif"] },
    ];
    writeFileSync(path.join(data, "objects.jsonl"), objects.map((object) => JSON.stringify(object)).join("\n") + "\n");
    await cliJson(project, ["objects", "add", path.join(data, "objects.jsonl")]);
    const created = await runCli(["--project", project, "--json", "index", "create", "--type", "image", "--name", "photos", "--model", CLIP, "--highlights", "--wait"]);
    expect(created.exitCode, created.stderr).toBe(0);
    server = await serve(project, ["--no-auth"]);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("asks for no key and shows each result's matching images as thumbnails, best first", async () => {
    const { page, problems } = await openTab(browser, `${server.url}/?q=${encodeURIComponent("a red picture")}&mode=vector`);
    await page.locator("#results > li").first().waitFor();
    expect(await page.locator("#key-form").isHidden()).toBe(true);
    expect(await page.locator("#hybrid").isVisible()).toBe(false); // (inside the closed Options)
    const expected = (await call(`${server.url}/v1/indexes/photos/search?${new URLSearchParams({ query: "a red picture", mode: "vector", result_fields: "highlights" })}`, null)).json;
    expect(await resultIds(page)).toEqual(expected.results.map((hit: Hit) => hit.id));
    expect((await resultIds(page))[0]).toBe("red");
    // The thumbnails of "flag", in the API's order, each decoded.
    const flag = page.locator('#results > li[data-id="flag"] figure.thumbnail');
    expect(await flag.evaluateAll((figures) => figures.map((figure) => (figure as HTMLElement).dataset.image))).toEqual(
      expected.results.find((hit: Hit) => hit.id === "flag").highlights.map((highlight: { media_identifier: string }) => highlight.media_identifier),
    );
    await page.waitForFunction(() => [...document.querySelectorAll("figure.thumbnail img")].length === document.querySelectorAll("figure.thumbnail").length && [...document.querySelectorAll("figure.thumbnail img")].every((img) => img.complete && img.naturalWidth > 0));
    // The right pictures: the first result's thumbnail is red (its centre pixel, read back from the page).
    const centre = await page.locator('#results > li[data-id="red"] img').evaluate((img: HTMLImageElement) => {
      const canvas = document.createElement("canvas");
      canvas.width = img.naturalWidth;
      canvas.height = img.naturalHeight;
      const context2d = canvas.getContext("2d") as CanvasRenderingContext2D;
      context2d.drawImage(img, 0, 0);
      return [...context2d.getImageData(img.naturalWidth >> 1, img.naturalHeight >> 1, 1, 1).data];
    });
    expect(centre[0]).toBeGreaterThan(200);
    expect(centre[1]).toBeLessThan(60);
    expect(centre[2]).toBeLessThan(60);
    // The images are the server's (blob: URLs of fetched thumbnails): the browser never fetched an object's path or URL.
    expect(await page.locator("figure.thumbnail img").evaluateAll((images) => images.every((img) => (img as HTMLImageElement).src.startsWith("blob:")))).toBe(true);
    await screenshot(page, "search-page", "images-1280");
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("serves thumbnails only of the images an object names", async () => {
    const thumbnail = (id: string, image: string) => call(`${server.url}/v1/objects/${id}/thumbnail?${new URLSearchParams({ image, size: "64" })}`, null);
    const good = await fetch(`${server.url}/v1/objects/red/thumbnail?${new URLSearchParams({ image: "pics/red.png", size: "64" })}`);
    expect(good.status).toBe(200);
    expect(good.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await good.arrayBuffer()).subarray(1, 4).toString("latin1")).toBe("PNG");
    // another object's image, a file the object does not name, a path out of its folder: never read
    for (const [id, image] of [["red", "pics/green.jpg"], ["red", "/etc/passwd"], ["red", "../pics/red.png"], ["red", "pics/../../../etc/hostname"]] as const) {
      const refused = await thumbnail(id, image);
      expect(refused.status, image).toBe(404);
      expect(refused.json.errors[0].code, image).toBe("IMAGE_NOT_FOUND");
    }
    // a value of the object that is no image
    expect((await thumbnail("red", "a ripe tomato")).json.errors[0].code).toBe("IMAGE_UNAVAILABLE");
    expect((await thumbnail("nobody", "pics/red.png")).json.errors[0].code).toBe("OBJECT_NOT_FOUND");
    expect((await thumbnail("red", "pics/red.png").then(() => call(`${server.url}/v1/objects/red/thumbnail?image=pics%2Fred.png&size=5000`, null))).status).toBe(422);
  });
});
