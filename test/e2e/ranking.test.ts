/**
 * Ranking controls through the real CLI and server, on the project's own ranking collection
 * (fixtures/ranking: notes and products): the semantic ratio, scores and their parts in results,
 * and one order for one query whatever shows it (a pipe, --json, HTTP, the page-through).
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliJson, ROOT, runCli, tempProject } from "../helpers/cli.js";
import { KEY, Terminal } from "../helpers/pty.js";
import { call, serve, type Served } from "../helpers/serve.js";

interface Explain {
  ranking: string;
  lexical?: { score: number; normalized: number } | null;
  vector?: { similarity: number; normalized: number } | null;
  semantic_ratio?: number;
  fused?: number;
  highlight?: { score: number };
}
interface Result {
  id: string;
  score?: number;
  explain?: Explain;
  highlights?: unknown[];
}
interface Response {
  results: Result[];
  pagination: { statistics: { total: number; total_calculation: string } };
}

const project = tempProject();
let index = "";
let server: Served | undefined;
const search = (query: string, ...args: string[]) => cliJson<Response>(project, ["search", index, query, ...args]);
const ids = (response: Response) => response.results.map((result) => result.id);

beforeAll(async () => {
  await cliJson(project, ["objects", "add", path.join(ROOT, "fixtures", "ranking", "corpus.jsonl")]);
  index = (await cliJson(project, ["index", "create", "--searchable", "title,body", "--highlights", "--wait"])).id;
  // The CLI's searches are answered by this server over the local socket (as a user's would be when
  // one runs; test/e2e/local-search.test.ts shows they print the same), so they do not each load the model.
  server = await serve(project, ["--no-auth"]);
});
afterAll(async () => {
  await server?.stop();
});

describe("--semantic-ratio (HTTP semantic_ratio)", () => {
  it("0 ranks as the lexical mode, 1 as the vector mode, totals included; between them, hybrid at that weight", async () => {
    const query = "how often should I oil my bicycle";
    expect(await search(query, "--semantic-ratio", "0", "--limit", "50")).toEqual(await search(query, "--mode", "lexical", "--limit", "50"));
    expect(await search(query, "--semantic-ratio", "1", "--limit", "50")).toEqual(await search(query, "--mode", "vector", "--limit", "50"));
    const half = await search(query, "--semantic-ratio", "0.5", "--result-fields", "explain");
    expect(half.results.every((result) => result.explain?.semantic_ratio === 0.5)).toBe(true);
  });

  it("refuses what is not a number (exit 2) or outside 0..1 (exit 4, naming the range), and a ratio with --mode", async () => {
    const word = await runCli(["--project", project, "search", index, "tea", "--semantic-ratio", "half"]);
    expect([word.exitCode, word.stderr]).toEqual([2, expect.stringContaining('expected a number, got "half"')]);
    for (const ratio of ["1.5", "-0.1"]) {
      const out = await runCli(["--project", project, "--json", "search", index, "tea", "--semantic-ratio", ratio]);
      expect([out.exitCode, JSON.parse(out.stderr).errors[0].issues[0].path], ratio).toEqual([4, "semantic_ratio"]);
    }
    const both = await runCli(["--project", project, "--json", "search", index, "tea", "--semantic-ratio", "0.5", "--mode", "lexical"]);
    expect([both.exitCode, JSON.parse(both.stderr).errors[0].message]).toEqual([4, "Give semantic_ratio or mode, not both"]);
  });
});

describe("scores in results (result_fields score, explain)", () => {
  it("give the score that orders the results, and its parts, which add up to it", async () => {
    const response = await search("keep my drinks hot", "--result-fields", "score,explain", "--limit", "20");
    const scores = response.results.map((result) => result.score as number);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    for (const { score, explain } of response.results) {
      expect(explain?.ranking).toBe("hybrid");
      const ratio = explain?.semantic_ratio as number;
      const parts = (1 - ratio) * (explain?.lexical?.normalized ?? 0) + ratio * (explain?.vector?.normalized ?? 0);
      expect(parts).toBeCloseTo(score as number, 9);
      expect(explain?.fused).toBe(score);
    }
    // without them, the spec's shape: no score
    expect(Object.keys((await search("keep my drinks hot")).results[0] as object)).toEqual(["id", "object"]);
    // ranked by highlights: the best highlight's score is the score, and says so
    const highlighted = await search("tea", "--result-fields", "score,explain,highlights");
    const first = highlighted.results[0] as Result;
    expect(first.explain).toMatchObject({ ranking: "highlight", highlight: { score: first.score } });
  });

  it("the table shows the same score", async () => {
    const json = await search("charge my phone on the go", "--result-fields", "score", "--limit", "5");
    const tsv = await runCli(["--project", project, "search", index, "charge my phone on the go", "--limit", "5"]);
    const rows = tsv.stdout.trim().split("\n").slice(1).map((line) => line.split("\t"));
    expect(rows.map((row) => [row[1], Number(row[2])])).toEqual(json.results.map((result) => [result.id, Number((result.score as number).toFixed(3))]));
  });
});

describe("one order for one query", () => {
  it("in a pipe, --json, HTTP and the page-through, which shows highlights without reordering", async () => {
    // (a query whose highlights rank its results in another order than its regular ranking)
    const query = "rain";
    const json = ids(await search(query, "--limit", "8"));
    expect(ids(await search(query, "--limit", "8", "--result-fields", "highlights"))).not.toEqual(json);
    const tsv = await runCli(["--project", project, "search", index, query, "--limit", "8"]);
    expect(tsv.stdout.trim().split("\n").slice(1).map((line) => line.split("\t")[1])).toEqual(json);
    // the page-through fetches highlights to show them: they do not reorder it
    const terminal = new Terminal(["--project", project, "search", index, query, "--limit", "8"], { cols: 160, rows: 50 });
    try {
      const shown = await terminal.waitFor(/◆\s+What next\?/);
      const listed = [...shown.matchAll(/│ \d+ +│ ([np]\d\d) /g)].map((match) => match[1]);
      expect(listed).toEqual(json);
      await terminal.type("q", KEY.enter);
    } finally {
      terminal.kill();
    }
    const url = (server as Served).url;
    const answer = await call(`${url}/v1/indexes/${index}/search?query=${query}&limit=8`, null);
    expect(answer.json.results.map((result: Result) => result.id)).toEqual(json);
    // HTTP takes the same extensions
    const scored = await call(`${url}/v1/indexes/${index}/search?query=${query}&limit=3&semantic_ratio=0&result_fields=score`, null);
    expect(scored.json.results.map((result: Result) => [result.id, result.score])).toEqual((await search(query, "--semantic-ratio", "0", "--limit", "3", "--result-fields", "score")).results.map((result) => [result.id, result.score]));
    const bad = await call(`${url}/v1/indexes/${index}/search?query=${query}&semantic_ratio=2`, null);
    expect(bad.status).toBe(422);
  });
});

describe("words: typos, question words and the tokenizer", () => {
  const lexical = (query: string, ...args: string[]) => search(query, "--semantic-ratio", "0", "--limit", "50", ...args);

  it("a word that matches nothing is matched within 1 edit (5+ letters) or 2 (9+); exact matches rank first", async () => {
    expect(ids(await lexical("headphnes"))[0]).toBe("p04");
    expect(ids(await search("headphnes"))[0]).toBe("p04"); // hybrid too
    // "grinder" matches as written: that object first; then those only "coffe" → "coffee" finds
    const grinder = ids(await lexical("coffe grinder"));
    expect(grinder[0]).toBe("p17");
    expect(grinder.slice(1).sort()).toEqual(["n03", "p02", "p14"]);
    // a 4-letter typo is not corrected
    expect(ids(await lexical("lamq"))).toEqual([]);
  });

  it("a word that matches far fewer objects than a close spelling is matched fuzzily too, its own matches first", async () => {
    const other = tempProject();
    const notes = [
      ...Array.from({ length: 12 }, (_, i) => ({ id: `g${i}`, title: `Lesson ${i}`, body: `Grammar exercise ${i} on verbs and tenses.` })),
      { id: "typo", title: "Draft", body: "My grammer notes, to tidy up." },
      { id: "other", title: "Recipe", body: "Bake the bread for forty minutes." },
    ];
    await cliJson(other, ["objects", "add", "-"], { input: notes.map((note) => JSON.stringify(note)).join("\n") });
    const id = (await cliJson(other, ["index", "create", "--searchable", "title,body", "--wait"])).id;
    const found = ids(await cliJson<Response>(other, ["search", id, "grammer", "--semantic-ratio", "0", "--limit", "50", "--in-process"]));
    expect(found[0]).toBe("typo");
    expect(found.slice(1).sort()).toEqual(notes.filter((note) => note.id.startsWith("g")).map((note) => note.id).sort());
    // a rare word whose close spellings are not common stays as it is
    expect(ids(await cliJson<Response>(other, ["search", id, "forty", "--semantic-ratio", "0", "--in-process"]))).toEqual(["other"]);
  });

  it("question words do not make a match on their own", async () => {
    // n02 and n06 share only "my" with the query
    const found = ids(await lexical("how often should I oil my bicycle"));
    expect(found).not.toContain("n02");
    expect(found).not.toContain("n06");
    expect(found).toContain("p08");
    // a query of nothing else is searched as it is
    expect((await lexical("what is it")).results).toEqual([]);
  });

  it("is recorded per index, configurable (extension), and refused when unknown", async () => {
    expect((await cliJson(project, ["index", "get", index])).tokenizer).toEqual({ stem: true, stop_words: true, ascii_folding: true, lowercase: true, language: "English" });
    const config = path.join(path.dirname(project), "unstemmed.json");
    writeFileSync(config, JSON.stringify({ configuration: { index_type: { name: "text" }, fields: { searchable: { allow: ["title", "body"] } }, tokenizer: { stem: false } } }));
    const unstemmed = (await cliJson(project, ["index", "create", "--config", config, "--wait"])).id;
    expect((await cliJson(project, ["index", "get", unstemmed])).tokenizer).toMatchObject({ stem: false, stop_words: true });
    // "lubricating" finds "Lubricate" through the stem, and not without it
    expect(ids(await lexical("lubricating"))).toContain("n01");
    expect((await cliJson<Response>(project, ["search", unstemmed, "lubricating", "--semantic-ratio", "0"])).results).toEqual([]);
    writeFileSync(config, JSON.stringify({ configuration: { index_type: { name: "text" }, tokenizer: { stemming: false } } }));
    const refused = await runCli(["--project", project, "--json", "index", "create", "--config", config]);
    expect([refused.exitCode, JSON.parse(refused.stderr).errors[0].issues[0]]).toEqual([4, { path: "configuration.tokenizer", message: 'unknown tokenizer option "stemming"; the options are stem, stop_words, ascii_folding, lowercase, language' }]);
  });
});
