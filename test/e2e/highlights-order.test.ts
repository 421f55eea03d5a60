/**
 * One order for one search: a search with highlights is ranked by its best highlights (spec §4.4),
 * so the search page asks for highlights without that reordering (`highlights_rank=false`, as the
 * page-through does) and shows the order `semsearch search` prints; the CLI says once on stderr when
 * `--result-fields highlights` reorders its results. On the sample articles, with an index of highlights.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli, SAMPLE, tempProject } from "../helpers/cli.js";
import { addObjects, Engine, indexBody, ok, waitBuilt } from "../helpers/in-process.js";
import { createApp } from "../../src/server/app.js";

const project = tempProject();
let index = "";
/** A query whose highlights put another article first (guitar, piano-scales: 'practice' is in piano-scales' best sentence). */
const REORDERED = "music practice";

beforeAll(async () => {
  index = await ok(project, async (engine) => {
    await addObjects(engine, readFileSync(SAMPLE, "utf8"));
    const { id } = await engine.createIndex(indexBody(["title", "body"], true));
    await waitBuilt(engine, id);
    return id;
  });
}, 120_000);

describe("highlights and the order of results", () => {
  it("over HTTP, highlights_rank=false returns the highlights in the order of the search without them (the search page asks so)", async () => {
    const engine = new Engine({ projectDir: project });
    try {
      const app = createApp(engine, { checkKey: null });
      const ids = async (extra: string) => {
        const response = await app.request(`/v1/indexes/${index}/search?query=${encodeURIComponent(REORDERED)}&limit=10${extra}`, { headers: { host: "127.0.0.1:8080" } });
        expect(response.status).toBe(200);
        const body = (await response.json()) as { results: { id: string; highlights?: unknown[] }[] };
        return { ids: body.results.map((result) => result.id), highlighted: body.results.filter((result) => (result.highlights ?? []).length > 0).length };
      };
      const plain = await ids("");
      const ranked = await ids("&result_fields=highlights");
      const shown = await ids("&result_fields=highlights&highlights_rank=false");
      // (the spec's ranking by highlights does reorder this query: else the test would show nothing)
      expect(ranked.ids).not.toEqual(plain.ids);
      expect(shown.ids).toEqual(plain.ids);
      expect(shown.highlighted).toBeGreaterThan(0);
      const refused = await app.request(`/v1/indexes/${index}/search?query=x&highlights_rank=no`, { headers: { host: "127.0.0.1:8080" } });
      expect(refused.status).toBe(422);
    } finally {
      await engine.close();
    }
  });

  it("the CLI says once on stderr when --result-fields highlights reorders the results it shows a person, and not otherwise (nor to scripts, with --json)", async () => {
    const search = (...args: string[]) => runCli(["--project", project, "search", index, ...args]);
    const reordered = await search(REORDERED, "--result-fields", "highlights", "--all");
    expect(reordered.exitCode, reordered.stderr).toBe(0);
    expect(reordered.stderr.match(/ordered by their best highlight/g)).toHaveLength(1);
    const plain = await search(REORDERED);
    expect(plain.stderr).toBe("");
    // JSON for scripts, which ask for the spec's order with its shape: nothing said
    const json = await runCli(["--project", project, "--json", "search", index, REORDERED, "--result-fields", "highlights"]);
    expect(json.stderr).toBe("");
    expect(Object.keys(JSON.parse(json.stdout))).toEqual(["results", "pagination"]);
  });
});
