/**
 * The README's commands, run as a newcomer runs them: each `sh` block's lines through bash in one empty
 * folder, with `semsearch` on the PATH (the package's bin) and the sample data beside them. Each line
 * whose comment states an outcome is checked against that outcome here; a commented line no check
 * covers fails the test, so a new claim in the README needs a check (or a reason it is not run).
 */
import { existsSync, readFileSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { docsShell, ROOT, SAMPLE } from "../helpers/cli.js";
import { serve, type Served } from "../helpers/serve.js";

interface Line {
  command: string;
  /** what the README says of it, after `#` */
  comment: string;
}

/** The lines of the README's `sh` block that follows `heading` (the first one after it). */
function block(readme: string, heading: string): Line[] {
  const at = readme.indexOf(heading);
  expect(at, `the README has "${heading}"`).toBeGreaterThanOrEqual(0);
  const body = /```sh\n([\s\S]*?)```/.exec(readme.slice(at))?.[1] ?? "";
  const lines: Line[] = [];
  for (const raw of body.split("\n")) {
    if (raw.trim() === "") continue;
    // a line continued with `\`: one command
    const previous = lines.at(-1);
    if (previous?.command.endsWith("\\")) {
      const [command, comment] = split(raw);
      previous.command = `${previous.command.slice(0, -1).trimEnd()} ${command.trim()}`;
      previous.comment ||= comment;
      continue;
    }
    const [command, comment] = split(raw);
    lines.push({ command, comment });
  }
  return lines;
}

/** A line's command and its comment: the `#` outside quotes that follows a space. */
function split(raw: string): [string, string] {
  let quote: string | null = null;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as string;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "#" && (i === 0 || /\s/.test(raw[i - 1] as string))) return [raw.slice(0, i).trimEnd(), raw.slice(i + 1).trim()];
  }
  return [raw.trimEnd(), ""];
}

const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
const shell = docsShell("readme");
const work = shell.work;
// The walkthrough runs "inside this repository" (fixtures/…); the first block names its file articles.jsonl.
symlinkSync(path.join(ROOT, "fixtures"), path.join(work, "fixtures"));
symlinkSync(SAMPLE, path.join(work, "articles.jsonl"));

/** A command line as the README gives it, through bash in the folder; it must exit 0. */
function sh(command: string, extra: Record<string, string> = {}): { stdout: string; stderr: string } {
  const run = shell.run(command, extra);
  expect(run.status, `${command}\n${run.stdout}\n${run.stderr}`).toBe(0);
  return { stdout: run.stdout, stderr: run.stderr };
}
const json = (command: string) => JSON.parse(sh(command).stdout);
/** The ids of a search's rows printed in a pipe (tab-separated, a header line, the id second). */
const tsvIds = (stdout: string) => stdout.trim().split("\n").slice(1).map((row) => row.split("\t")[1]);
const sampleObject = (id: string) =>
  readFileSync(SAMPLE, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .find((object) => object.id === id);

type Check = [start: string, check: (line: Line) => void | Promise<void>];

/** Runs `lines` in order; each commented one must match a check (by the start of its command) or a reason it is not run. */
async function runBlock(lines: Line[], checks: Check[], notRun: Record<string, string> = {}) {
  const used = new Set<string>();
  for (const line of lines) {
    const skipped = Object.keys(notRun).find((start) => line.command.startsWith(start));
    if (skipped) {
      used.add(skipped);
      continue;
    }
    const check = checks.find(([start]) => line.command.startsWith(start));
    if (line.comment !== "") expect(check, `the README says "${line.comment}" of \`${line.command}\`, and no check here covers it`).toBeDefined();
    if (check) {
      await check[1](line);
      used.add(check[0]);
    } else sh(line.command);
  }
  // a check whose line is gone from the README is out of date
  for (const start of [...checks.map(([start]) => start), ...Object.keys(notRun)]) expect(used, `no README line starts with \`${start}\` any more`).toContain(start);
}

describe("README.md", () => {
  let server: Served | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  it("its commands, run in an empty folder, do what their comments say", async () => {
    const project = path.join(work, ".semsearch");
    let articles = "";

    // The walkthrough, inside this repository
    await runBlock(block(readme, "Inside this repository (after `npm link`"), [
      [
        "semsearch objects add fixtures/sample/articles.jsonl",
        ({ command }) => {
          expect(existsSync(project)).toBe(false);
          expect(sh(command).stdout).toBe("Added 40 objects.\n");
          expect(existsSync(path.join(project, "catalog.json")), "the first write creates ./.semsearch").toBe(true);
        },
      ],
      [
        "semsearch index create --name articles",
        ({ command }) => {
          const { stdout } = sh(command);
          expect(stdout).toMatch(/^idx_[0-9a-z]+\n$/);
          articles = stdout.trim();
          // (--wait: built when it returns)
          expect(json("semsearch --json index status articles").status).toEqual({ UPLOADED: 0, PROCESSING: 0, READY: 40, ERROR: 0 });
        },
      ],
      [
        'semsearch search articles "how do plants make energy',
        ({ command }) => {
          expect(tsvIds(sh(command).stdout).slice(0, 2)).toEqual(["photosynthesis", "mitochondria"]);
        },
      ],
      [
        "semsearch --json search articles energy --limit 2",
        ({ command }) => {
          const page = json(command);
          expect(page.results).toHaveLength(2);
          expect(page.pagination).toMatchObject({ pages: 20, page: 1 });
        },
      ],
      [
        "semsearch objects get photosynthesis",
        ({ command }) => {
          const { stdout } = sh(command);
          // the object as stored, then its state in each index
          expect(JSON.parse(stdout.slice(0, stdout.indexOf("\n}\n") + 2))).toEqual(sampleObject("photosynthesis"));
          expect(stdout).toContain(`${articles}: READY (searchable)`);
        },
      ],
    ]);

    // The same project over HTTP: `serve` runs "in another terminal" from its line on
    let key = "";
    await runBlock(block(readme, "The same project over HTTP"), [
      [
        "KEY=$(semsearch keys create --name laptop --read-only)",
        ({ command }) => {
          key = sh(`${command}; printf %s "$KEY"`).stdout;
          expect(key).toMatch(/^\S{20,}$/);
          // printed once: the list never shows it
          expect(sh("semsearch keys list").stdout).not.toContain(key);
        },
      ],
      [
        "semsearch serve",
        async ({ command }) => {
          expect(command).toBe("semsearch serve");
          // its default address is the README's; a test cannot count on that port being free, so this one takes any
          expect(sh("semsearch serve --help").stdout).toMatch(/--port[^\n]*8080/);
          server = await serve(project);
          expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        },
      ],
      [
        "curl -s -H",
        ({ command }) => {
          expect(server, "the server runs").toBeDefined();
          const page = JSON.parse(sh(command.replaceAll("http://127.0.0.1:8080", (server as Served).url), { KEY: key }).stdout);
          expect(page.results.map((result: { id: string }) => result.id)).toEqual(["photosynthesis", "mitochondria"]);
          expect(Object.keys(page.results[0].object)).toEqual(["title"]);
        },
      ],
    ]);
    await server?.stop();
    server = undefined;

    // "Using it": the commands of every day, on the same project (idx_abc: the index its second line makes)
    let created = "";
    const asCreated = (command: string) => command.replaceAll("idx_abc", created);
    await runBlock(
      block(readme, "## Using it"),
      [
        [
          "semsearch objects add articles.jsonl",
          ({ command }) => {
            expect(sh(command).stdout).toBe("Added 40 objects.\n");
            // the other forms it names: a JSON array, one JSON object, JSON Lines on standard input with -
            const one = JSON.stringify(sampleObject("bees"));
            expect(sh(`printf '%s' '[${one},${one}]' > array.json && semsearch objects add array.json`).stdout).toBe("Added 1 object.\n");
            expect(sh(`printf '%s' '${one}' > one.json && semsearch objects add one.json`).stdout).toBe("Added 1 object.\n");
            expect(sh("head -n 3 articles.jsonl | semsearch objects add -").stdout).toBe("Added 3 objects.\n");
          },
        ],
        [
          "semsearch index create --searchable title,body",
          ({ command }) => {
            const { stdout } = sh(command);
            expect(stdout).toMatch(/^idx_[0-9a-z]+\n$/);
            created = stdout.trim();
            // (built in the background after it exits: the next line's --wait sees every object indexed)
          },
        ],
        [
          "semsearch index create --name docs --searchable body",
          ({ command }) => {
            const id = sh(command).stdout.trim();
            expect(json("semsearch --json index get docs").id).toBe(id);
            expect(json("semsearch --json index status docs --wait").status.READY).toBe(40);
          },
        ],
        [
          "semsearch index status idx_abc --wait",
          ({ command }) => {
            const { stdout } = sh(asCreated(command));
            expect(stdout).toBe("UPLOADED 0 · PROCESSING 0 · READY 40 · ERROR 0\n");
          },
        ],
        ["semsearch search idx_abc \"how do plants make energy\"", ({ command }) => void sh(asCreated(command))],
        [
          "semsearch --json search idx_abc \"query\" --page 2",
          ({ command }) => {
            const page = json(asCreated(command));
            expect(Object.keys(page)).toEqual(["results", "pagination"]);
            expect(page.pagination.page).toBe(2);
          },
        ],
        [
          "semsearch search idx_abc \"query\" --all --jsonl",
          ({ command }) => {
            const ids = sh(asCreated(command)).stdout.trim().split("\n");
            const total = json(asCreated('semsearch --json search idx_abc "query"')).pagination.statistics.total;
            expect(ids).toHaveLength(total);
            expect(new Set(ids).size).toBe(total);
          },
        ],
      ],
      {
        // (a filter of another data set's fields, a syntax example; filters: test/e2e/filters.test.ts)
        'semsearch search idx_abc "trail shoes"': "no such fields in the sample",
        // (downloads from Hugging Face, which tests never reach: test/e2e/models.test.ts runs them against a local hub)
        "semsearch index create --model Xenova/bge-small-en-v1.5": "downloads a model",
        "semsearch models pull Xenova/all-MiniLM-L6-v2": "downloads a model",
        // (CLIP is downloaded too: test/e2e/images.test.ts runs image indexes with a small local CLIP)
        "semsearch index create --type image": "downloads CLIP",
        'semsearch search idx_img "a red bicycle"': "needs the image index",
      },
    );
  });
});
