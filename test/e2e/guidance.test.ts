/**
 * What a new user stumbles on, through the real CLI: searching an index that is still building, a
 * misspelt field name, objects that fail to index, and waits that cannot end on their own.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cliJson, runCli, tempProject } from "../helpers/cli.js";

const forty = Array.from({ length: 40 }, (_, i) => JSON.stringify({ id: `p${i}`, title: `Paper ${i} on tidal energy`, body: `Waves and tides ${i}.`, price: i % 10 === 0 ? "cheap" : i })).join("\n");

/**
 * A project whose index stays building: its worker is killed (crash point) before it reads anything,
 * and so is any worker a command given the same crash point starts.
 */
async function buildingProject() {
  const project = tempProject();
  await cliJson(project, ["objects", "add", "-"], { input: forty });
  const created = await runCli(["--project", project, "--json", "index", "create", "--searchable", "title,body"], { env: { SEMSEARCH_FAILPOINT: "worker:read" } });
  expect(created.exitCode, created.stderr).toBe(0);
  const { id } = JSON.parse(created.stdout);
  return { project, id };
}

describe("searching an index that is still building", () => {
  it("says so on stderr (a JSON line with --json), with how far it got and how to wait", async () => {
    const { project, id } = await buildingProject();
    const human = await runCli(["--project", project, "search", id, "tidal energy"], { env: { SEMSEARCH_FAILPOINT: "worker:read" } });
    expect(human.exitCode).toBe(0);
    expect(human.stderr).toContain(`warning: Index ${id} is still building: 0 of 40 objects are searchable so far`);
    expect(human.stderr).toContain(`semsearch index status ${id} --wait`);
    const json = await runCli(["--project", project, "--json", "search", id, "tidal energy"], { env: { SEMSEARCH_FAILPOINT: "worker:read" } });
    expect(JSON.parse(json.stdout).results).toEqual([]);
    expect(JSON.parse(json.stderr)).toEqual({ warnings: [{ code: "INDEX_BUILDING", message: expect.stringContaining("0 of 40") }] });
    // once built, no warning
    await cliJson(project, ["index", "status", id, "--wait"]);
    const done = await runCli(["--project", project, "search", id, "tidal energy"]);
    expect(done.stderr).toBe("");
  });
});

describe("a misspelt field name", () => {
  it("is pointed out at create (with the fields that exist), and again when the build ends with no searchable text", async () => {
    const project = tempProject();
    await cliJson(project, ["objects", "add", "-"], { input: forty });
    const created = await runCli(["--project", project, "index", "create", "--searchable", "titel", "--wait"]);
    expect(created.exitCode, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^idx_\w+\n$/);
    expect(created.stderr).toContain('None of the 40 stored objects has the field "titel" (did you mean "title"?). Fields they have: ');
    expect(created.stderr).toMatch(/Fields they have: [^\n]*\btitle\b/);
    expect(created.stderr).toContain("none of the 40 indexed objects has searchable text");
    const fine = await runCli(["--project", project, "--json", "index", "create", "--searchable", "title,body"]);
    expect(fine.stderr).toBe("");
  });
});

describe("objects that cannot be indexed", () => {
  it("--wait shows the counts and first reasons on stderr, prints its result, and exits 7; objects get shows the reason", async () => {
    const project = tempProject();
    await cliJson(project, ["objects", "add", "-"], { input: forty });
    const result = await runCli(["--project", project, "--json", "index", "create", "--field-type", "price=float", "--wait"]);
    expect(result.exitCode, result.stderr).toBe(7);
    const { id } = JSON.parse(result.stdout);
    expect(id).toMatch(/^idx_/);
    const warning = JSON.parse(result.stderr).warnings[0];
    expect(warning.code).toBe("OBJECTS_FAILED");
    expect(warning.message).toContain("4 objects could not be indexed (READY 36 · ERROR 4)");
    expect(warning.message).toContain('p0: field "price": ');
    const human = await runCli(["--project", project, "objects", "get", "p10"]);
    expect(human.stdout).toMatch(new RegExp(`${id}: ERROR — field "price": `));
    const status = await runCli(["--project", project, "index", "status", id, "--wait"]);
    expect(status.exitCode).toBe(7);
    expect(status.stdout).toBe("UPLOADED 0 · PROCESSING 0 · READY 36 · ERROR 4\n");
  });
});

describe("waits that cannot end on their own", () => {
  it("--wait --timeout gives up with exit 5 and a message while the write lock is held; resumes once it is free", async () => {
    const { project, id } = await buildingProject();
    // a live process holds the project's write lock: the worker cannot commit anything
    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    const stat = (await import("node:fs")).readFileSync(`/proc/${holder.pid}/stat`, "utf8");
    const boot = (await import("node:fs")).readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    const start = process.platform === "linux" ? `${boot}:${stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]}` : undefined;
    writeFileSync(path.join(project, "write.lock"), JSON.stringify({ pid: holder.pid, start, command: "a test holding the lock", nonce: "t" }));
    try {
      const waited = await runCli(["--project", project, "--json", "index", "status", id, "--wait", "--timeout", "2"]);
      expect(waited.exitCode, waited.stderr).toBe(5);
      expect(JSON.parse(waited.stderr).errors[0]).toMatchObject({ code: "WAIT_TIMEOUT", message: expect.stringContaining(`Index ${id} is not built after 2 s (0 of 40 objects indexed)`) });
    } finally {
      holder.kill("SIGKILL");
    }
    await new Promise((resolve) => holder.once("exit", resolve));
    expect((await cliJson(project, ["index", "status", id, "--wait"])).status.READY).toBe(40);
  });
});

describe("index names", () => {
  it("a unique name given at create works wherever an id does", async () => {
    const project = tempProject();
    await cliJson(project, ["objects", "add", "-"], { input: forty });
    const created = await runCli(["--project", project, "index", "create", "--name", "papers", "--searchable", "title,body", "--wait"]);
    expect(created.exitCode, created.stderr).toBe(0);
    const id = created.stdout.trim();
    expect(id).toMatch(/^idx_\w+$/);
    expect((await cliJson(project, ["index", "get", "papers"])).id).toBe(id);
    expect((await cliJson(project, ["index", "status", "papers"])).status.READY).toBe(40);
    const byName = await cliJson(project, ["search", "papers", "tidal energy", "--limit", "5"]);
    const byId = await cliJson(project, ["search", id, "tidal energy", "--limit", "5"]);
    expect(byName).toEqual(byId);
    const list = await runCli(["--project", project, "index", "list"]);
    expect(list.stdout).toMatch(/papers/);
    const taken = await runCli(["--project", project, "--json", "index", "create", "--name", "papers"]);
    expect(taken.exitCode).toBe(5);
    expect(JSON.parse(taken.stderr).errors[0].code).toBe("INDEX_NAME_TAKEN");
    for (const bad of ["idx_papers", "-x", "a b", "x".repeat(65)]) {
      const invalid = await runCli(["--project", project, "--json", "index", "create", "--name", bad]);
      expect(invalid.exitCode, bad).toBe(4);
    }
    expect(await cliJson(project, ["index", "delete", "papers"])).toEqual({ deleted: id });
    expect((await runCli(["--project", project, "search", "papers", "q"])).exitCode).toBe(3);
  });
});
