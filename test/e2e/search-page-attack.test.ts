/**
 * The search page of `semsearch serve` and its thumbnail route, attacked as an outside tester
 * would: values of an object that are no image it indexes named as its "photo", a page on another
 * origin embedding thumbnails, answers arriving out of order, an index deleted and a key revoked
 * while the page shows them, right-to-left overrides in ids and field names. Real server, real
 * project, Debian's Chromium (playwright-core).
 */
import { cpSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliJson, ROOT, runCli, tempProject } from "../helpers/cli.js";
import { articlesProject, HAVE_BROWSER, launchBrowser, openTab } from "../helpers/browser.js";
import { call, serve, type Served } from "../helpers/serve.js";
import { tempDir } from "../helpers/temp.js";

// The functions passed to page.evaluate run in the browser: its globals, untyped here.
declare const document: any;
type HTMLElement = any;
type HTMLImageElement = any;

const CLIP = path.join(ROOT, "fixtures", "models", "tiny-clip");
const IMAGES = path.join(ROOT, "fixtures", "images");

/** A server on another port of this machine: it counts requests to /admin and serves `page` at /page. */
async function elsewhere(): Promise<{ port: number; admin: () => number; page: (html: string) => void; close: () => Promise<void> }> {
  let admin = 0;
  let html = "";
  const server = http.createServer((request, response) => {
    if (request.url?.startsWith("/admin")) admin++;
    if (request.url === "/page") {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(html);
      return;
    }
    response.writeHead(404);
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, admin: () => admin, page: (text) => (html = text), close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe.skipIf(!HAVE_BROWSER)("thumbnails, attacked (an image index, a server without keys)", () => {
  let browser: Browser;
  let server: Served;
  let other: Awaited<ReturnType<typeof elsewhere>>;
  let secret = "";

  beforeAll(async () => {
    other = await elsewhere();
    const project = tempProject();
    const data = tempDir();
    cpSync(IMAGES, path.join(data, "pics"), { recursive: true });
    // A picture of the user's that no index reads, named in a note.
    secret = path.join(tempDir(), "private.png");
    cpSync(path.join(IMAGES, "red.png"), secret);
    const objects = [
      { id: "red", caption: "a ripe tomato", photo: "pics/red.png" },
      { id: "notes", caption: "a page of notes", photo: "pics/blue.png", notes: secret, homepage: `http://127.0.0.1:${other.port}/admin/drop?all=1` },
    ];
    writeFileSync(path.join(data, "objects.jsonl"), objects.map((object) => JSON.stringify(object)).join("\n") + "\n");
    await cliJson(project, ["objects", "add", path.join(data, "objects.jsonl")]);
    const created = await runCli(["--project", project, "--json", "index", "create", "--type", "image", "--name", "photos", "--searchable", "caption,photo", "--model", CLIP, "--highlights", "--wait"]);
    expect(created.exitCode, created.stderr).toBe(0);
    server = await serve(project, ["--no-auth"]);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await other?.close();
  });

  const thumbnail = (id: string, image: string) => call(`${server.url}/v1/objects/${id}/thumbnail?${new URLSearchParams({ image, size: "64" })}`, null);

  it("are made only of images an image index reads: a file named in a note, a URL in a text field are neither read nor fetched", async () => {
    expect((await thumbnail("notes", "pics/blue.png")).status).toBe(200);
    for (const value of [secret, `http://127.0.0.1:${other.port}/admin/drop?all=1`, "a page of notes"]) {
      const refused = await thumbnail("notes", value);
      expect(refused.status, value).toBe(404);
      expect(refused.json.errors[0].code, value).toBe("IMAGE_UNAVAILABLE");
    }
    // (the answer comes after any fetch it made)
    expect(other.admin()).toBe(0);
  });

  it("a page on another origin cannot embed one (<img>), same site or not", async () => {
    const src = `${server.url}/v1/objects/red/thumbnail?${new URLSearchParams({ image: "pics/red.png", size: "64" })}`;
    other.page(`<!doctype html><title>elsewhere</title><img id="shot" src="${src}" alt="">`);
    // localhost is another site than 127.0.0.1; 127.0.0.1 on another port is the same site
    for (const host of ["localhost", "127.0.0.1"]) {
      const context: BrowserContext = await browser.newContext();
      try {
        const page = await context.newPage();
        await page.goto(`http://${host}:${other.port}/page`);
        await page.waitForFunction(() => document.getElementById("shot").complete);
        expect(await page.locator("#shot").evaluate((img: HTMLImageElement) => img.naturalWidth), host).toBe(0);
      } finally {
        await context.close();
      }
    }
    // The search page itself still shows it.
    const { page, problems } = await openTab(browser, `${server.url}/?q=${encodeURIComponent("a red picture")}&mode=vector`);
    await page.locator('#results > li[data-id="red"] figure.thumbnail img').waitFor();
    expect(await page.locator('#results > li[data-id="red"] figure.thumbnail img').evaluate((img: HTMLImageElement) => img.decode().then(() => img.naturalWidth))).toBeGreaterThan(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe.skipIf(!HAVE_BROWSER)("the search page, attacked (keys)", () => {
  let browser: Browser;
  let server: Served;
  let project = "";
  let reader = "";
  let writer = "";

  /** A new tab at `pagePath`, the key given through the key box. */
  function open(pagePath: string, key = reader): Promise<{ page: Page; problems: string[] }> {
    return openTab(browser, `${server.url}${pagePath}`, { key });
  }

  /** An index that stays building: the server was started with --no-worker. */
  async function buildingIndex(name: string): Promise<string> {
    const created = await call(`${server.url}/v1/indexes`, writer, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name, configuration: { index_type: { name: "text" }, fields: { searchable: { allow: ["title"] } } } }) });
    expect(created.status, created.text).toBe(202);
    return created.json.id;
  }

  beforeAll(async () => {
    const bidi = [
      { id: "bidi-a\u202Egnp.exe", title: "energy bidi one", body: "energy and light" },
      { id: "bidi-b", title: "energy bidi two", body: "energy and light", "k\u202Eyek": "value" },
    ];
    ({ project, reader, writer } = await articlesProject(bidi));
    server = await serve(project, ["--no-worker"]);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("never shows the answer for a result opened before in the dialog of the one opened after", async () => {
    const { page, problems } = await open(`/?index=articles&q=${encodeURIComponent("energy bidi")}`);
    await page.locator('#results > li[data-id="bidi-b"]').waitFor();
    const ids = await page.locator("#results > li").evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.id));
    // The first result's object is held by the network until the second's is shown.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(`**/v1/objects/${encodeURIComponent("bidi-a\u202Egnp.exe")}`, async (route) => {
      await held;
      await route.continue().catch(() => {}); // (a request the page cancelled meanwhile)
    });
    const late = (request: { url(): string }) => request.url().includes("/v1/objects/bidi-a");
    const settled = Promise.race([page.waitForEvent("requestfinished", late), page.waitForEvent("requestfailed", late)]);
    await page.locator(`#result-${ids.indexOf("bidi-a\u202Egnp.exe")}`).click();
    await page.keyboard.press("Escape");
    await page.locator(`#result-${ids.indexOf("bidi-b")}`).click();
    await page.locator("#detail .json").waitFor();
    release();
    await settled;
    // (the page has had the late answer, if any: what it does with it is done by its next task and frame)
    await page.evaluate(() => new Promise((resolve) => setTimeout(() => (globalThis as any).requestAnimationFrame(resolve), 0)));
    expect(await page.locator("#detail-title").textContent()).toBe("energy bidi two");
    expect(await page.locator("#detail .meta code").textContent()).toBe("bidi-b");
    expect(problems).toEqual([]);
  });

  it("stops reading a building index that was deleted, says so, and lists the indexes left", async () => {
    const id = await buildingIndex("doomed");
    const { page } = await open("/?index=doomed");
    await page.locator("#index-info progress").waitFor();
    const deleted = await call(`${server.url}/v1/indexes/doomed`, writer, { method: "DELETE" });
    expect(deleted.status, deleted.text).toBeLessThan(300);
    await expect.poll(() => page.locator("#error").textContent(), { timeout: 30_000 }).toContain('The index "doomed" was deleted');
    expect(await page.locator("#index option").evaluateAll((options) => options.map((option) => (option as HTMLElement).getAttribute("value")))).not.toContain(id);
    expect(await page.locator("#index-info").textContent()).not.toContain("building");
  });

  it("asks for a key again when the one in use is revoked while a building index is read", async () => {
    await buildingIndex("pending");
    const doomedKey = await cliJson(project, ["keys", "create", "--name", "soon-revoked", "--read-only"]);
    const { page } = await open("/?index=pending", doomedKey.key);
    await page.locator("#index-info progress").waitFor();
    const revoked = await runCli(["--project", project, "keys", "revoke", doomedKey.id]);
    expect(revoked.exitCode, revoked.stderr).toBe(0);
    await page.locator("#key-form").waitFor({ state: "visible", timeout: 30_000 });
    expect(await page.locator("#key-message").textContent()).toContain("did not accept this key");
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.getItem("semsearch.key"))).toBe(null);
  });

  it("keeps a right-to-left override in an id or a field name to itself, and shows it in the object", async () => {
    const { page, problems } = await open(`/?index=articles&q=${encodeURIComponent("energy bidi")}`);
    await page.locator('#results > li[data-id="bidi-b"]').waitFor();
    const ids = await page.locator("#results > li").evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.id));
    await page.locator(`#result-${ids.indexOf("bidi-a\u202Egnp.exe")}`).click();
    await page.locator("#detail .json").waitFor();
    // The words after the id ("· complete · added …") read left to right after it, not reversed.
    const order = await page.locator("#detail .meta").evaluate((meta: HTMLElement) => {
      const text = meta.querySelector("code").nextSibling;
      const x = (at: number) => {
        const range = document.createRange();
        range.setStart(text, at);
        range.setEnd(text, at + 1);
        return range.getBoundingClientRect().left;
      };
      const words = text.textContent as string;
      return { dot: x(words.indexOf("·")), complete: x(words.indexOf("complete")), code: meta.querySelector("code").getBoundingClientRect().right };
    });
    expect(order.dot).toBeLessThan(order.complete);
    expect(order.code).toBeLessThanOrEqual(order.dot);
    // The object shows the override as an escape, where it is.
    expect(await page.locator("#detail .json .json-string").first().textContent()).toBe('"bidi-a\\u202egnp.exe"');
    await page.keyboard.press("Escape");
    await page.locator(`#result-${ids.indexOf("bidi-b")}`).click();
    await page.locator("#detail .json").waitFor();
    expect(await page.locator("#detail .json .json-key").allTextContents()).toContain("k\\u202eyek");
    expect(problems).toEqual([]);
  });
});
