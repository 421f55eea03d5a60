/** The interactive page-through in a real terminal, and the pipe-friendly outputs. */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { BIN, cliJson, ROOT, runCli, tempProject } from "../helpers/cli.js";
import { KEY, Terminal } from "../helpers/pty.js";

const project = tempProject();
let index = "";
let terminal: Terminal | null = null;
/** The menu waiting for a choice (◆; an answered prompt shows ◇). */
const ACTIVE_MENU = /◆\s+What next\?/;

beforeAll(async () => {
  await cliJson(project, ["objects", "add", path.join(ROOT, "fixtures", "sample", "products.jsonl")]);
  index = (await cliJson(project, ["index", "create", "--highlights", "--wait"])).id;
});
afterEach(() => terminal?.kill());

describe("interactive page-through (in a pseudo-terminal)", () => {
  it("opens by default on a terminal: pages forward and back, jumps to a page, opens a result, quits", async () => {
    terminal = new Terminal(["--project", project, "search", index, "coffee", "--limit", "3"]);
    let shown = await terminal.waitFor(ACTIVE_MENU);
    expect(shown).toMatch(/“coffee” · page 1 of 10 · 30 results/);
    expect(shown).toMatch(/│ 1 +│ p13/); // the table, ranked

    await terminal.type(KEY.enter); // Next page (the default)
    shown = await terminal.waitFor(ACTIVE_MENU);
    expect(shown).toMatch(/page 2 of 10/);
    expect(shown).toMatch(/│ 4 +│/);

    await terminal.type(KEY.down, KEY.enter); // Previous page
    expect(await terminal.waitFor(ACTIVE_MENU)).toMatch(/page 1 of 10/);

    await terminal.type(KEY.down, KEY.enter); // Go to page…
    await terminal.waitFor(/Page \(1–10\)/);
    await terminal.type("9", KEY.enter);
    shown = await terminal.waitFor(ACTIVE_MENU);
    expect(shown).toMatch(/page 9 of 10/);
    expect(shown).toMatch(/│ 25 +│/);

    await terminal.type(KEY.down, KEY.down, KEY.down, KEY.down, KEY.enter); // Show a result in full…
    await terminal.waitFor(/◆\s+Which result\?/);
    await terminal.type(KEY.enter);
    shown = await terminal.waitFor(ACTIVE_MENU);
    expect(shown).toMatch(/#25 p\d\d · score/);
    expect(shown).toMatch(/"maker": \{\n\s+"name":/); // every field, pretty-printed

    await terminal.type(KEY.up, KEY.enter); // Quit (the last option; the menu wraps)
    await terminal.waitFor(/Bye\./);
    expect(await terminal.exited).toBe(0);
  });

  it("changes the page size and the query", async () => {
    terminal = new Terminal(["--project", project, "search", index, "shoes"]);
    await terminal.waitFor(ACTIVE_MENU);
    await terminal.type(KEY.down, KEY.down, KEY.enter); // Results per page… (page 1: next, goto, limit)
    await terminal.waitFor(/Results per page/);
    await terminal.type("\x7f", "\x7f", "5", KEY.enter);
    expect(await terminal.waitFor(ACTIVE_MENU)).toMatch(/page 1 of 6 · 30 results/);
    await terminal.type(KEY.up, KEY.up, KEY.enter); // New query… (above Quit)
    await terminal.waitFor(/New query/);
    await terminal.type(...Array(5).fill("\x7f"), ..."tent", KEY.enter);
    expect(await terminal.waitFor(ACTIVE_MENU)).toMatch(/“tent” · page 1 of 6/);
  });

  it("Esc leaves cleanly, and so does Ctrl+C", async () => {
    for (const key of [KEY.escape, KEY.ctrlC]) {
      terminal = new Terminal(["--project", project, "search", index, "tent"]);
      await terminal.waitFor(ACTIVE_MENU);
      await terminal.type(key);
      expect(await terminal.exited).toBe(0);
      expect(terminal.screen).toMatch(/Bye\./);
    }
  });

  it("--no-interactive prints one page on a terminal", async () => {
    terminal = new Terminal(["--project", project, "search", index, "tent", "--no-interactive"]);
    expect(await terminal.exited).toBe(0);
    expect(terminal.screen).toMatch(/Page 1 of 3 · 30 results/);
    expect(terminal.screen).not.toMatch(/What next/);
  });

  it("a pipe gets a table, never a prompt; --interactive there is a usage error", async () => {
    const piped = await runCli(["--project", project, "search", index, "tent"]);
    expect(piped.exitCode).toBe(0);
    expect(piped.stdout).toMatch(/Page 1 of 3/);
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
