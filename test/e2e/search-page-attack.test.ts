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
import { HAVE_BROWSER, launchBrowser } from "../helpers/browser.js";
import { call, serve, type Served } from "../helpers/serve.js";
import { tempDir } from "../helpers/temp.js";

// The functions passed to page.evaluate run in the browser: its globals, untyped here.
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any;
type HTMLElement = any;
type HTMLImageElement = any;

const ARTICLES = path.join(ROOT, "fixtures", "sample", "articles.jsonl");
const CLIP = path.join(ROOT, "fixtures", "models", "tiny-clip");
const IMAGES = path.join(ROOT, "fixtures", "images");

/** Console errors, page errors and CSP violations of a page. */
function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  void page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event: any) => console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`));
  });
  return problems;
}

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
      expect(refused.json.errors[0].code, value).toBe("IMAGE_NOT_FOUND");
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
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const problems = watchProblems(page);
      await page.goto(`${server.url}/?q=${encodeURIComponent("a red picture")}&mode=vector`);
      await page.locator('#results > li[data-id="red"] figure.thumbnail img').waitFor();
      expect(await page.locator('#results > li[data-id="red"] figure.thumbnail img').evaluate((img: HTMLImageElement) => img.decode().then(() => img.naturalWidth))).toBeGreaterThan(0);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
