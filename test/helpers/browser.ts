/**
 * Debian's Chromium driven by playwright-core (no browser download: `.ci/browser install` puts it
 * at /usr/bin/chromium; SEMSEARCH_CHROMIUM names another). Without it, the browser tests skip and
 * say so once.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { cliJson, ROOT, runCli, tempProject } from "./cli.js";
import { tempDir } from "./temp.js";

export const CHROMIUM = process.env.SEMSEARCH_CHROMIUM ?? "/usr/bin/chromium";
export const HAVE_BROWSER = existsSync(CHROMIUM);
if (!HAVE_BROWSER) process.stderr.write(`semsearch tests: no browser at ${CHROMIUM} (run .ci/browser install as root): the search page's browser tests are skipped\n`);

/** Where screenshots are kept for a person to look at (not committed). */
export const ARTIFACTS = path.join(ROOT, "test-artifacts");

export function launchBrowser(): Promise<Browser> {
  // Flags that keep Chromium off the network it would otherwise call at start (closed here), and a
  // sandbox it cannot have as root.
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-default-apps"],
  });
}

// (the function given to addInitScript runs in the browser, whose globals the Node program has no types for)
declare const document: { addEventListener(type: string, listener: (event: { violatedDirective: string; blockedURI: string }) => void): void };

/** Console errors, page errors and Content-Security-Policy violations, collected for the whole life of a page. */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  void page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`));
  });
  return problems;
}

/**
 * A new tab (its own context, so its own session storage) at `url`, its problems watched, and `key`
 * typed into the key box when given. Closing the browser closes it.
 */
export async function openTab(browser: Browser, url: string, options: { key?: string | null; width?: number; dark?: boolean } = {}): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: 900 }, colorScheme: options.dark ? "dark" : "light" });
  const page = await context.newPage();
  const problems = watchProblems(page);
  await page.goto(url);
  if (options.key !== undefined && options.key !== null) {
    await page.locator("#key").fill(options.key);
    await page.locator("#key").press("Enter");
  }
  return { page, problems };
}

/** A full-page screenshot under test-artifacts/<folder>/<name>.png. */
export async function screenshot(page: Page, folder: string, name: string): Promise<string> {
  const dir = path.join(ARTIFACTS, folder);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * A project for the search page's tests: the sample articles and `extra` objects, a text index
 * named "articles" over title and body with highlights (and `filterable` fields), and two keys.
 */
export async function articlesProject(extra: object[], filterable: string[] = []): Promise<{ project: string; reader: string; writer: string }> {
  const project = tempProject();
  const file = path.join(tempDir(), "extra.jsonl");
  writeFileSync(file, extra.map((object) => JSON.stringify(object)).join("\n") + "\n");
  await cliJson(project, ["objects", "add", path.join(ROOT, "fixtures", "sample", "articles.jsonl"), file]);
  const filters = filterable.length ? ["--filterable", filterable.join(",")] : [];
  const created = await runCli(["--project", project, "--json", "index", "create", "--name", "articles", "--searchable", "title,body", ...filters, "--highlights", "--wait"]);
  if (created.exitCode !== 0) throw new Error(`index create exited ${created.exitCode}: ${created.stderr}`);
  const reader = (await cliJson(project, ["keys", "create", "--name", "reader", "--read-only"])).key as string;
  const writer = (await cliJson(project, ["keys", "create", "--name", "writer"])).key as string;
  return { project, reader, writer };
}
