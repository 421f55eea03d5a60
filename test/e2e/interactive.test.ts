/** The interactive page-through in a real terminal, and the pipe-friendly outputs. */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BIN, cliJson, ROOT, runCli, tempProject } from "../helpers/cli.js";
import { serve, type Served } from "../helpers/serve.js";
import { KEY, Terminal } from "../helpers/pty.js";

const project = tempProject();
let server: Served | undefined;
let index = "";
let terminal: Terminal | null = null;
/** The menu waiting for a choice (◆; an answered prompt shows ◇). */
const ACTIVE_MENU = /◆\s+What next\?/;

beforeAll(async () => {
  await cliJson(project, ["objects", "add", path.join(ROOT, "fixtures", "sample", "products.jsonl")]);
  index = (await cliJson(project, ["index", "create", "--highlights", "--wait"])).id;
  // A server of the project answers the sessions' searches warm (the same bytes as in the CLI's own
  // process, test/e2e/local-search.test.ts): each session no longer loads the model.
  server = await serve(project, ["--no-auth"]);
});
afterAll(async () => {
  await server?.stop();
});
afterEach(() => terminal?.kill());

/** The entries of the last menu in `shown`, without their hints: "n Next page", … */
function menu(shown: string): string[] {
  const lines = shown.slice(shown.search(/◆\s+What next\?[^\n]*\n(?![\s\S]*◆\s+What next\?)/)).split("\n").slice(1);
  return lines.slice(0, lines.findIndex((line) => line.startsWith("└"))).map((line) => line.replace(/^│\s+/, "").replace(/\s+\(.*\)$/, "").replace(/\s+/, " "));
}

const ENTRIES = ["n Next page", "p Previous page", "g Go to page…", "r Refresh", "s Results per page…", "o Open a result…", "/ New query…", "q Quit"];

describe("interactive page-through (in a pseudo-terminal)", () => {
  it("opens by default on a terminal; single keys page forward and back, jump to a page, open a result, quit", async () => {
    terminal = new Terminal(["--project", project, "search", index, "coffee", "--limit", "3"]);
    let shown = await terminal.waitFor(ACTIVE_MENU);
    expect(shown).toMatch(/“coffee” · page 1 of 10 · 30 results/);
    expect(shown).toMatch(/│ 1 +│ p13/); // the table, ranked

    await terminal.type("n");
    shown = await terminal.waitFor(ACTIVE_MENU);
    expect(shown).toMatch(/page 2 of 10/);
    expect(shown).toMatch(/│ 4 +│/);

    await terminal.type("p");
    expect(await terminal.waitFor(ACTIVE_MENU)).toMatch(/page 1 of 10/);

    await terminal.type(KEY.enter); // Enter: next page
    expect(await terminal.waitFor(ACTIVE_MENU)).toMatch(/page 2 of 10/);

    await terminal.type("g");
    await terminal.waitFor(/◆\s+Page \(1–10\)/);
    await terminal.type("9", KEY.enter);
    shown = await terminal.waitFor(ACTIVE_MENU);
    expect(shown).toMatch(/page 9 of 10/);
    expect(shown).toMatch(/│ 25 +│/);

    await terminal.type("o");
    await terminal.waitFor(/◆\s+Which result\?/);
    await terminal.type(KEY.enter);
    shown = await terminal.waitFor(ACTIVE_MENU);
    expect(shown).toMatch(/#25 p\d\d · score/);
    expect(shown).toMatch(/"maker": \{\n\s+"name":/); // every field, pretty-printed

    await terminal.type("q");
    await terminal.waitFor(/Bye\./);
    expect(await terminal.exited).toBe(0);
  });

  it("shows the same menu, in the same order, on every page; what does not apply is greyed out and inert", async () => {
    terminal = new Terminal(["--project", project, "search", index, "coffee", "--limit", "10"]);
    const first = await terminal.waitFor(ACTIVE_MENU);
    expect(menu(first)).toEqual(ENTRIES);
    expect(first).toMatch(/p {2}Previous page \(this is the first page\)/);
    expect(terminal.rawScreen).toMatch(/\x1b\[2m p \x1b\[22m/); // the key dimmed

    await terminal.type("n");
    expect(menu(await terminal.waitFor(ACTIVE_MENU))).toEqual(ENTRIES);
    await terminal.type("n");
    const last = await terminal.waitFor(ACTIVE_MENU);
    expect(last).toMatch(/page 3 of 3/);
    expect(menu(last)).toEqual(ENTRIES);
    expect(last).toMatch(/n {2}Next page \(this is the last page\)/);
    expect(terminal.rawScreen).toMatch(/\x1b\[2m n \x1b\[22m/);

    await terminal.type("n", "p"); // n does nothing on the last page; p still works
    expect(await terminal.waitFor(ACTIVE_MENU)).toMatch(/page 2 of 3/);
    expect(terminal.screen.match(/page 3 of 3/g)).toHaveLength(1);
    await terminal.type("q");
    expect(await terminal.exited).toBe(0);
  });

  it("changes the page size; a new query starts from an empty box", async () => {
    terminal = new Terminal(["--project", project, "search", index, "shoes"]);
    await terminal.waitFor(ACTIVE_MENU);
    await terminal.type("s");
    await terminal.waitFor(/◆\s+Results per page/);
    await terminal.type("5", KEY.enter);
    expect(await terminal.waitFor(ACTIVE_MENU)).toMatch(/page 1 of 6 · 30 results/);
    await terminal.type("/");
    expect(await terminal.waitFor(/◆\s+New query\n│ {2}shoes/)).toBeTruthy(); // the old query as a placeholder
    await terminal.type(..."tent", KEY.enter);
    expect(await terminal.waitFor(ACTIVE_MENU)).toMatch(/“tent” · page 1 of 6/);
  });

  it("r runs the current page again, so changes since show", async () => {
    const changing = tempProject();
    await cliJson(changing, ["objects", "add", path.join(ROOT, "fixtures", "sample", "products.jsonl")]);
    const changingIndex = (await cliJson(changing, ["index", "create", "--wait"])).id;
    terminal = new Terminal(["--project", changing, "search", changingIndex, "coffee", "--limit", "3"]);
    expect(await terminal.waitFor(ACTIVE_MENU)).toMatch(/│ 1 +│ p13/);
    expect((await runCli(["--project", changing, "objects", "delete", "p13"])).exitCode).toBe(0);
    await terminal.type("r");
    const shown = await terminal.waitFor(ACTIVE_MENU);
    expect(shown).toMatch(/“coffee” · page 1 of 10 · 29 results/);
    expect(shown).not.toMatch(/p13/);
  });

  it.each([
    ["g", /◆\s+Page \(1–3\)/],
    ["s", /◆\s+Results per page/],
    ["o", /◆\s+Which result\?/],
    ["/", /◆\s+New query/],
  ])("Esc in the question after %s goes back to the menu", async (key, question) => {
    terminal = new Terminal(["--project", project, "search", index, "tent"]);
    await terminal.waitFor(ACTIVE_MENU);
    await terminal.type(key);
    await terminal.waitFor(question);
    await terminal.type(KEY.escape);
    const shown = await terminal.waitFor(ACTIVE_MENU);
    expect(shown).not.toMatch(/Bye|page 1 of/); // the same page's menu, the table not shown again
    await terminal.type("q");
    expect(await terminal.exited).toBe(0);
  });

  it("Esc, Ctrl+C or q at the menu leave cleanly", async () => {
    for (const key of [KEY.escape, KEY.ctrlC, "q"]) {
      terminal = new Terminal(["--project", project, "search", index, "tent"]);
      await terminal.waitFor(ACTIVE_MENU);
      await terminal.type(key);
      expect(await terminal.exited).toBe(0);
      expect(terminal.screen).toMatch(/Bye\./);
    }
  });

  it("shows no command-line hints: the table's next-page footer is for the non-interactive table", async () => {
    terminal = new Terminal(["--project", project, "search", index, "coffee", "--limit", "3"]);
    await terminal.waitFor(ACTIVE_MENU);
    await terminal.type("n");
    await terminal.waitFor(ACTIVE_MENU);
    await terminal.type("q");
    expect(await terminal.exited).toBe(0);
    expect(terminal.screen).not.toMatch(/--offset|--limit|semsearch search|Try:/);
  });

  it.each([60, 40])("fits a %i-column terminal", async (cols) => {
    terminal = new Terminal(["--project", project, "search", index, "waterproof jacket for rainy mountain hikes", "--object-fields", "title,category,price"], { cols, rows: 40 });
    await terminal.waitFor(ACTIVE_MENU);
    await terminal.type("o");
    await terminal.waitFor(/◆\s+Which result\?/);
    await terminal.type(KEY.escape);
    await terminal.waitFor(ACTIVE_MENU);
    await terminal.type("q");
    expect(await terminal.exited).toBe(0);
    const wide = terminal.screen.split("\n").filter((line) => line.length > cols);
    expect(wide, wide.join("\n")).toEqual([]);
    expect(terminal.screen).toMatch(/│ 1 +│/);
  });

  it("an error in the session closes its frame first; an error on the first page opens none", async () => {
    const doomed = (await cliJson(project, ["index", "create", "--wait"])).id;
    terminal = new Terminal(["--project", project, "search", doomed, "tent"]);
    await terminal.waitFor(ACTIVE_MENU);
    expect((await runCli(["--project", project, "index", "delete", doomed])).exitCode).toBe(0);
    await terminal.type("r");
    expect(await terminal.exited).toBe(3);
    expect(terminal.screen).toMatch(/└ {2}Search failed\.\n+error: Index "idx_\w+" not found\n/);

    terminal = new Terminal(["--project", project, "search", doomed, "tent"]);
    expect(await terminal.exited).toBe(3);
    expect(terminal.screen.trim()).toMatch(/^error: Index "idx_\w+" not found\n/);
  });

  it("--no-interactive prints one page on a terminal", async () => {
    terminal = new Terminal(["--project", project, "search", index, "tent", "--no-interactive"]);
    expect(await terminal.exited).toBe(0);
    expect(terminal.screen).toMatch(/Page 1 of 3 · 30 results/);
    expect(terminal.screen).not.toMatch(/What next/);
  });

  it("a pipe gets tab-separated values, never a prompt; --interactive there is a usage error", async () => {
    const piped = await runCli(["--project", project, "search", index, "tent"]);
    expect(piped.exitCode).toBe(0);
    expect(piped.stdout).toMatch(/^rank\tid\tscore\ttext\n1\t/);
    const forced = await runCli(["--project", project, "search", index, "tent", "--interactive"]);
    expect(forced.exitCode).toBe(2);
    expect(forced.stderr).toMatch(/needs a terminal/);
  });
});

describe("pipes", () => {
  it("--jsonl prints one result per line, each the spec's result shape", async () => {
    const run = spawnSync("sh", ["-c", `"${process.execPath}" "${BIN}" --project "${project}" search ${index} coffee --jsonl --limit 7 | wc -l`], { encoding: "utf8" });
    expect(run.stdout.trim()).toBe("7");
    const lines = (await runCli(["--project", project, "search", index, "coffee", "--jsonl", "--limit", "7", "--result-fields", "highlights"])).stdout.trim().split("\n");
    for (const line of lines) expect(Object.keys(JSON.parse(line))).toEqual(["id", "object", "highlights"]);
  });

  it("--all follows next through every page: the union of the pages, in order", async () => {
    const pages: string[] = [];
    for (const offset of [0, 12, 24]) {
      const page = await cliJson(project, ["search", index, "kettle", "--limit", "12", "--offset", String(offset)]);
      pages.push(...page.results.map((r: { id: string }) => r.id));
    }
    const all = await runCli(["--project", project, "search", index, "kettle", "--all", "--limit", "12", "--jsonl"]);
    expect(all.stdout.trim().split("\n").map((line) => JSON.parse(line).id)).toEqual(pages);
    const json = await cliJson(project, ["search", index, "kettle", "--all", "--limit", "12"]);
    expect(json.results.map((r: { id: string }) => r.id)).toEqual(pages);
    expect(json.pagination).toEqual({ pages: 1, page: 1, statistics: { total: 30, total_calculation: "exact" } });
    expect(all.stderr).toBe("");
  });
});
