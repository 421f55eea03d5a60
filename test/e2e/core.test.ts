import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliJson, runCli, SAMPLE, tempProject } from "../helpers/cli.js";
import { serve, type Served } from "../helpers/serve.js";

const project = tempProject();
let server: Served | undefined;
let indexId = "";
const sampleCount = readFileSync(SAMPLE, "utf8").trim().split("\n").length;

beforeAll(async () => {
  const added = await cliJson(project, ["objects", "add", SAMPLE]);
  expect(added.count).toBe(sampleCount);
  const created = await cliJson(project, ["index", "create", "--searchable", "title,body", "--wait"]);
  expect(Object.keys(created)).toEqual(["id"]);
  expect(created.id).toMatch(/^idx_[A-Za-z0-9_-]+$/);
  indexId = created.id;
  // A server of the project answers the CLI's searches and reads warm (the same bytes as in the
  // CLI's own process, test/e2e/local-search.test.ts): each no longer loads the model.
  server = await serve(project, ["--no-auth"]);
});

afterAll(async () => {
  await server?.stop();
});

describe("search", () => {
  it("prints the service's exact JSON shape, id-only objects by default", async () => {
    const response = await cliJson(project, ["search", indexId, "how do plants make energy from sunlight"]);
    expect(Object.keys(response)).toEqual(["results", "pagination"]);
    expect(response.results).toHaveLength(10);
    expect(response.results[0]).toEqual({ id: "photosynthesis", object: { id: "photosynthesis" } });
    expect(response.pagination).toEqual({
      pages: 4,
      page: 1,
      next: { offset: 10, limit: 10 },
      statistics: { total: sampleCount, total_calculation: "exact" },
    });
  });

  it("prints a readable table without escape codes when piped with --format table (tab-separated values without it)", async () => {
    const piped = await runCli(["--project", project, "search", indexId, "repair", "a", "puncture", "--object-fields", "title"]);
    expect(piped.stdout.split("\n").slice(0, 2).map((line) => line.split("\t").slice(0, 2))).toEqual([["rank", "id"], ["1", "bicycle-repair"]]);
    const result = await runCli(["--project", project, "search", indexId, "repair", "a", "puncture", "--object-fields", "title", "--format", "table"]);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(/│ 1\s+│ bicycle-repair/);
    expect(result.stdout).toContain("Fixing a flat bicycle");
    expect(result.stdout).toMatch(/Page 1 of 4 · 40 results · next page: --offset 10 --limit 10/);
    expect(result.stdout).not.toMatch(/\x1b\[/);
  });

  it("returns the requested object fields", async () => {
    const all = await cliJson(project, ["search", indexId, "dripping faucet", "--object-fields", "*", "--limit", "1"]);
    expect(all.results[0].object).toMatchObject({ id: "leaky-tap", title: "Fixing a dripping tap", topic: "repair", year: 2021 });
    const some = await cliJson(project, ["search", indexId, "dripping faucet", "--object-fields", "title,year", "--limit", "1"]);
    expect(some.results[0].object).toEqual({ title: "Fixing a dripping tap", year: 2021 });
  });

  it("adds highlights only when asked (results_fields is an alias)", async () => {
    const plain = await cliJson(project, ["search", indexId, "coffee", "--limit", "2"]);
    expect(plain.results[0]).not.toHaveProperty("highlights");
    for (const flag of ["--result-fields", "--results-fields"]) {
      const withHighlights = await cliJson(project, ["search", indexId, "coffee", "--limit", "2", flag, "highlights"]);
      expect(withHighlights.results[0].highlights).toEqual([]);
    }
  });

  it("--page N is offset limit × (N − 1); the last page has a short next and then none", async () => {
    const page2 = await cliJson(project, ["search", indexId, "energy", "--limit", "15", "--page", "2"]);
    const offset15 = await cliJson(project, ["search", indexId, "energy", "--limit", "15", "--offset", "15"]);
    expect(page2).toEqual(offset15);
    expect(page2.pagination.page).toBe(2);
    expect(page2.pagination.next).toEqual({ offset: 30, limit: 10 });
    const last = await cliJson(project, ["search", indexId, "energy", "--limit", "15", "--offset", "30"]);
    expect(last.results).toHaveLength(10);
    expect(last.pagination).not.toHaveProperty("next");
    const past = await cliJson(project, ["search", indexId, "energy", "--limit", "15", "--offset", "300"]);
    expect(past.results).toEqual([]);
  });
});

/** Objects stored now (tests in this file add and delete their own, in any order). */
async function storedCount(): Promise<number> {
  return (await cliJson(project, ["objects", "list", "--limit", "1000"])).objects.length;
}

describe("indexes and objects", () => {
  it("lists and describes indexes, with per-state counts", async () => {
    const { indexes } = await cliJson(project, ["index", "list"]);
    expect(indexes.map((index: { id: string }) => index.id)).toContain(indexId);
    const info = await cliJson(project, ["index", "get", indexId]);
    expect(info).toMatchObject({ id: indexId, model: "use-lite-512", dimension: 512, state: "READY" });
    expect(info.configuration).toEqual({ index_type: { name: "text" }, fields: { searchable: { allow: ["title", "body"] } } });
    expect(await cliJson(project, ["index", "status", indexId, "--wait"])).toEqual({
      status: { UPLOADED: 0, PROCESSING: 0, READY: await storedCount(), ERROR: 0 },
    });
  });

  it("shows an object with its state in each index", async () => {
    const info = await cliJson(project, ["objects", "get", "espresso"]);
    expect(info.object.title).toBe("Pulling a good espresso");
    expect(info.status).toEqual({ state: "complete", indexes: [{ id: indexId, status: "READY", searchable: true }] });
    const { objects } = await cliJson(project, ["objects", "list", "--limit", "3"]);
    const sortedIds = readFileSync(SAMPLE, "utf8").trim().split("\n").map((line) => JSON.parse(line).id as string).sort();
    expect(objects.map((o: { id: string }) => o.id)).toEqual(sortedIds.slice(0, 3));
  });

  it("replaces an object with the same id (upsert), keeping created_at", async () => {
    const before = await cliJson(project, ["objects", "get", "guitar"]);
    const replacement = JSON.stringify({ id: "guitar", title: "Ukulele basics", body: "A ukulele has four nylon strings tuned G C E A.", topic: "music" });
    await cliJson(project, ["objects", "add", "-", "--wait"], { input: replacement });
    const after = await cliJson(project, ["objects", "get", "guitar"]);
    expect(after.object.title).toBe("Ukulele basics");
    expect(after.created_at).toBe(before.created_at);
    expect(after.updated_at > before.updated_at).toBe(true);
    const hits = await cliJson(project, ["search", indexId, "ukulele nylon strings", "--limit", "1"]);
    expect(hits.results[0].id).toBe("guitar");
    expect((await cliJson(project, ["index", "status", indexId])).status.READY).toBe(await storedCount());
  });

  it("deletes an object from the store and from search", async () => {
    // an object of its own, so no other test depends on whether this one ran first
    const doomed = JSON.stringify({ id: "zz-doomed", title: "Caffeine and adenosine", body: "Caffeine blocks adenosine receptors in the brain.", topic: "food" });
    await cliJson(project, ["objects", "add", "-", "--wait"], { input: doomed });
    const before = await cliJson(project, ["search", indexId, "caffeine adenosine receptors", "--limit", "40"]);
    expect(before.results.map((r: { id: string }) => r.id)).toContain("zz-doomed");
    expect(await cliJson(project, ["objects", "delete", "zz-doomed"])).toEqual({ deleted: "zz-doomed" });
    const hits = await cliJson(project, ["search", indexId, "caffeine adenosine receptors", "--limit", "40"]);
    expect(hits.results.map((r: { id: string }) => r.id)).not.toContain("zz-doomed");
    expect((await runCli(["--project", project, "objects", "get", "zz-doomed"])).exitCode).toBe(3);
  });

  it("deletes an index; its id is then unknown", async () => {
    const { id } = await cliJson(project, ["index", "create", "--neural-only"]);
    expect(await cliJson(project, ["index", "delete", id])).toEqual({ deleted: id });
    const result = await runCli(["--project", project, "search", id, "anything"]);
    expect(result.exitCode).toBe(3);
  });
});

describe("demo", () => {
  it("indexes the sample articles in a temporary project and prints a table", async () => {
    const result = await runCli(["demo"]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/│ 1\s+│ photosynthesis/);
    expect(result.stderr).toContain("Project: ");
    // the temporary project is removed at the end, its worker stopped first
    const dir = /Project: (\S+) \(removed at the end; --keep keeps it\)/.exec(result.stderr)?.[1] as string;
    expect(dir).toMatch(/semsearch-demo-/);
    expect(existsSync(dir)).toBe(false);
    expect(result.stderr).toContain("semsearch demo --keep");
  });

  it("keeps its project with --keep, and says how to search it", async () => {
    const result = await runCli(["demo", "--keep", "--limit", "1"]);
    expect(result.exitCode, result.stderr).toBe(0);
    const dir = /Project: (\S+)\n/.exec(result.stderr)?.[1] as string;
    expect(existsSync(path.join(dir, "catalog.json"))).toBe(true);
    expect(result.stderr).toContain(`Try: semsearch --project ${dir} search idx_`);
  });
});
