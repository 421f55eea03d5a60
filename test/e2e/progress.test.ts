/**
 * One picture of a build, through the real CLI and server: with the worker held mid-build (a
 * failpoint), `index status`, `worker status`, a search's warning and the HTTP API give the same
 * counts, and the objects counted READY are the ones a search finds. Where stderr is no terminal,
 * `--wait` writes its progress as a plain line at the interval (SEMSEARCH_PROGRESS_INTERVAL_MS).
 */
import { spawn } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, cliJson, ROOT, runCli, tempProject, userEnv } from "../helpers/cli.js";
import { call, serve } from "../helpers/serve.js";
import { waitFor, within } from "../helpers/wait.js";

/** Three batches of 128 and a bit: the first committed, the second claimed and held, the rest waiting. */
const COUNT = 300;
const ids = Array.from({ length: COUNT }, (_, i) => `o${String(i).padStart(3, "0")}`);
const input = ids.map((id, i) => JSON.stringify({ id, title: `Object ${i} of the harbour log, marker${i}x` })).join("\n");
const HELD = { UPLOADED: COUNT - 256, PROCESSING: 128, READY: 128, ERROR: 0 };

/**
 * A project whose worker is held at its second batch (`worker:read@2:hold`): the first batch is
 * committed, the second claimed. `release` lets it go on.
 */
async function heldBuild() {
  const project = tempProject();
  const hold = path.join(path.dirname(project), "hold");
  // (every command that may start the worker gets the failpoint: whichever starts it, it holds)
  const env = { SEMSEARCH_FAILPOINT: "worker:read@2:hold", SEMSEARCH_FAILPOINT_HOLD: hold };
  await cliJson(project, ["objects", "add", "-"], { input, env });
  const { id } = await cliJson<{ id: string }>(project, ["index", "create", "--searchable", "title"], { env });
  await waitFor("the worker to write the hold file at its second batch", () => existsSync(hold), { timeoutMs: 150_000, intervalMs: 200 });
  return { project, id, release: () => rmSync(hold, { force: true }) };
}

describe("a build's progress, from every side", () => {
  it("index status, worker status, the search warning and the HTTP API agree; what is READY a search finds", async () => {
    const { project, id, release } = await heldBuild();
    try {
      expect((await cliJson(project, ["index", "status", id])).status).toEqual(HELD);
      const worker = await cliJson(project, ["worker", "status"]);
      expect(worker).toMatchObject({ running: true, indexes: [{ id, status: HELD }] });
      const human = await runCli(["--project", project, "worker", "status"]);
      expect(human.stdout).toContain(`\n  ${id}: UPLOADED 44 · PROCESSING 128 · READY 128 · ERROR 0\n`);

      // the search warns with the same numbers, and finds exactly the objects counted READY: the first batch's
      const searched = await runCli(["--project", project, "--json", "search", id, "harbour log object", "--limit", "1000"]);
      expect(searched.exitCode, searched.stderr).toBe(0);
      expect(JSON.parse(searched.stderr).warnings[0]).toMatchObject({ code: "INDEX_BUILDING", message: expect.stringContaining(`128 of ${COUNT} objects are searchable so far`) });
      const found = (JSON.parse(searched.stdout).results as { id: string }[]).map((result) => result.id).sort();
      expect(found).toEqual(ids.slice(0, HELD.READY));
      const processing = await runCli(["--project", project, "--json", "search", id, "marker200x", "--limit", "1000"]);
      expect((JSON.parse(processing.stdout).results as { id: string }[]).map((result) => result.id)).not.toContain("o200"); // (PROCESSING: not found yet)

      const server = await serve(project, ["--no-auth", "--no-worker"]);
      try {
        expect((await call(`${server.url}/v1/indexes/${id}/status`, null)).json).toEqual({ status: HELD });
        expect((await call(`${server.url}/v1/indexes`, null)).json.indexes[0]).toMatchObject({ id, state: "BUILDING", status: HELD });
        expect((await call(`${server.url}/v1/worker`, null)).json.indexes).toEqual([{ id, status: HELD }]);
        const page = await call(`${server.url}/v1/indexes/${id}/search?query=harbour`, null);
        expect(page.headers.get("semsearch-index-building")).toBe(`128/${COUNT}`);
      } finally {
        await server.stop();
      }
    } finally {
      release();
    }
    const built = await cliJson(project, ["index", "status", id, "--wait"]);
    expect(built.status).toEqual({ UPLOADED: 0, PROCESSING: 0, READY: COUNT, ERROR: 0 });
  });

  it("--wait on a non-terminal writes a plain line (no \\r, no colours) at the interval, the counts as index status prints them", async () => {
    const { project, id, release } = await heldBuild();
    const intervalMs = 400;
    const started = Date.now();
    const child = spawn(process.execPath, [BIN, "--project", project, "index", "status", id, "--wait"], {
      cwd: ROOT,
      env: userEnv({ SEMSEARCH_PROGRESS_INTERVAL_MS: String(intervalMs) }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    let held: string[];
    try {
      await waitFor(`three progress lines on stderr (so far: ${JSON.stringify(stderr)})`, () => stderr.split("\n").length > 3, { intervalMs: 200 });
      held = stderr.split("\n").slice(0, 3);
      // never more lines than intervals gone by
      expect(stderr.split("\n").length - 1).toBeLessThanOrEqual(Math.floor((Date.now() - started) / intervalMs));
    } finally {
      release();
    }
    expect(held).toEqual(Array(3).fill(`${id}: UPLOADED 44 · PROCESSING 128 · READY 128 · ERROR 0 · embedding`));
    expect(await within("the wait to end once the worker goes on", exited, 150_000)).toBe(0);
    expect(stdout).toBe(`UPLOADED 0 · PROCESSING 0 · READY ${COUNT} · ERROR 0\n`);
    expect(stderr).not.toMatch(/[\r\x1b]/);
    for (const line of stderr.trimEnd().split("\n")) {
      expect(line).toMatch(new RegExp(`^${id}: UPLOADED [\\d,]+ · PROCESSING [\\d,]+ · READY [\\d,]+ · ERROR [\\d,]+( · [\\d.]+/s)?( · ETA \\d+[smh]( \\d+[sm])?)?( · (embedding|building the search indexes))?$`));
    }
    const bad = await runCli(["--project", project, "index", "status", id, "--wait"], { env: { SEMSEARCH_PROGRESS_INTERVAL_MS: "30s" } });
    expect([bad.exitCode, bad.stderr]).toEqual([4, expect.stringContaining("SEMSEARCH_PROGRESS_INTERVAL_MS must be an integer from 10 to 86,400,000")]);
  });
});
