/**
 * What a new user stumbles on, through the real CLI: searching an index that is still building, a
 * misspelt field name, objects that fail to index, and waits that cannot end on their own.
 */
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, cliJson, runCli, tempProject, userEnv } from "../helpers/cli.js";
import { call, serve } from "../helpers/serve.js";

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

describe("Ctrl+C on --wait", () => {
  it("stops the waiting, says the index goes on being built in the background, and exits 130", async () => {
    const { project, id } = await buildingProject();
    const child = spawn(process.execPath, [BIN, "--project", project, "index", "status", id, "--wait"], { env: userEnv({ SEMSEARCH_FAILPOINT: "worker:read" }), stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(stderr).toContain(`Stopped waiting; ${id} goes on being built in the background (\`semsearch index status ${id} --wait\` to watch it again).`);
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
      expect(JSON.parse(waited.stderr).errors[0]).toMatchObject({ code: "WAIT_TIMEOUT", message: expect.stringContaining(`Index ${id} is not built after 2 s (0 of 40 objects searchable)`) });
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
    // (which names are refused: test/unit/engine/config.test.ts)
    const invalid = await runCli(["--project", project, "--json", "index", "create", "--name", "idx_papers"]);
    expect([invalid.exitCode, JSON.parse(invalid.stderr).errors[0].issues[0].path]).toEqual([4, "name"]);
    expect(await cliJson(project, ["index", "delete", "papers"])).toEqual({ deleted: id });
    expect((await runCli(["--project", project, "search", "papers", "q"])).exitCode).toBe(3);
  });
});

describe("objects without an id field", () => {
  const products = Array.from({ length: 30 }, (_, i) => JSON.stringify({ sku: `TW-${100 + i}`, title: `Tidewater jacket ${i}`, price: 20 + i })).join("\n");

  it("are refused when a field looks like their id, naming it; --id-field then keys them, and adding again replaces them", async () => {
    const project = tempProject();
    const dir = path.dirname(project);
    const file = path.join(dir, "products.jsonl");
    writeFileSync(file, products);
    const refused = await runCli(["--project", project, "objects", "add", file]);
    expect(refused.exitCode).toBe(4);
    expect(refused.stderr).toContain(`${file}:1: no "id" field; did you mean --id-field sku? (all 30 objects without an id have a unique "sku")`);
    expect(refused.stderr).toContain("--generate-ids");
    expect(await runCli(["--project", project, "--json", "objects", "list"]).then((r) => r.exitCode === 0 ? JSON.parse(r.stdout).objects : r.stderr)).toEqual([]);
    for (let round = 0; round < 2; round++) {
      const added = await cliJson(project, ["objects", "add", file, "--id-field", "sku"]);
      expect(added.count).toBe(30);
      expect(added.ids[0]).toBe("TW-100");
    }
    expect((await cliJson(project, ["objects", "list", "--limit", "1000"])).objects).toHaveLength(30);
  });

  it("--id-field on an object without that field is an error naming its file and line, and nothing is added", async () => {
    const project = tempProject();
    const file = path.join(path.dirname(project), "products.jsonl");
    writeFileSync(file, `${products.split("\n").slice(0, 2).join("\n")}\n{"title":"no sku"}\n`);
    const failed = await runCli(["--project", project, "--json", "objects", "add", file, "--id-field", "sku"]);
    expect(failed.exitCode).toBe(4);
    const [error] = JSON.parse(failed.stderr).errors;
    expect(error.code).toBe("MISSING_ID");
    expect(error.message).toBe(`${file}:3: the object has no field "sku", named as the id field`);
    expect((await cliJson(project, ["objects", "list"])).objects).toEqual([]);
  });

  it("get random ids otherwise, said on stderr (quiet with --generate-ids)", async () => {
    const project = tempProject();
    const notes = '{"title":"Groceries","body":"eggs"}\n{"title":"Ideas","body":"a boat"}\n';
    const human = await runCli(["--project", project, "objects", "add", "-"], { input: notes });
    expect(human.exitCode, human.stderr).toBe(0);
    expect(human.stdout).toBe("Added 2 objects.\n");
    expect(human.stderr).toContain('2 objects have no "id" field (the first at <stdin>:1): they were given random ids.');
    const json = await runCli(["--project", project, "--json", "objects", "add", "-"], { input: notes });
    expect(JSON.parse(json.stderr).warnings[0].code).toBe("IDS_GENERATED");
    expect(await cliJson(project, ["objects", "add", "-", "--generate-ids"], { input: products })).toMatchObject({ count: 30 });
    // some objects with an id, some without: no guess (--id-field sku would refuse the ones with an id)
    const mixed = await runCli(["--project", project, "--json", "objects", "add", "-"], { input: '{"id":"x","t":"a"}\n{"sku":"s2"}\n{"sku":"s3"}\n' });
    expect([mixed.exitCode, JSON.parse(mixed.stderr).warnings[0].code]).toEqual([0, "IDS_GENERATED"]);
    expect((await cliJson(project, ["objects", "list", "--limit", "1000"])).objects).toHaveLength(37);
  });
});

describe("deleting many objects", () => {
  const goods = Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: `g${i}`, title: `Tidewater coat ${i}`, category: i % 4 === 0 ? "sale" : "new" })).join("\n");

  it("by ids as arguments or on stdin, all or none; by --filter, asked for with --yes without a terminal", async () => {
    const project = tempProject();
    await cliJson(project, ["objects", "add", "-"], { input: goods });
    expect(await cliJson(project, ["objects", "delete", "g1", "g2", "g2"])).toEqual({ count: 2, deleted: ["g1", "g2"] });
    expect(await cliJson(project, ["objects", "delete", "g3"])).toEqual({ deleted: "g3" }); // one id: the shape it always had
    for (const empty of [[""], ["", "g4"]]) expect((await runCli(["--project", project, "objects", "delete", ...empty])).exitCode, JSON.stringify(empty)).toBe(3); // (no object has it: alike, one id or more)
    const missing = await runCli(["--project", project, "--json", "objects", "delete", "g5", "nope", "g6"]);
    expect(missing.exitCode).toBe(3);
    expect(JSON.parse(missing.stderr).errors[0].message).toBe('1 of the 3 ids are not stored: "nope"; nothing was deleted');
    const piped = await runCli(["--project", project, "objects", "delete", "-"], { input: "\ufeffg5\r\ng6\n\n  \n" }); // (a byte order mark is no part of an id)
    expect([piped.exitCode, piped.stdout]).toEqual([0, "Deleted 2 objects.\n"]);
    expect((await cliJson(project, ["objects", "list"])).objects).toHaveLength(15);

    const { id } = await cliJson(project, ["index", "create", "--searchable", "title", "--filterable", "category", "--wait"]);
    const unasked = await runCli(["--project", project, "--json", "objects", "delete", "--filter", "category:sale"]);
    expect(unasked.exitCode).toBe(2);
    expect(JSON.parse(unasked.stderr).errors[0]).toMatchObject({ code: "CONFIRMATION_NEEDED", message: expect.stringContaining("The filter matches 5 objects: add --yes") });
    const byFilter = await cliJson(project, ["objects", "delete", "--filter", "category:sale", "--yes"]);
    expect([...byFilter.deleted].sort()).toEqual(["g0", "g12", "g16", "g4", "g8"]);
    expect(await cliJson(project, ["objects", "delete", "--filter", "category:sale", "--index", id, "--yes"])).toEqual({ count: 0, deleted: [] });
    const left = (await cliJson(project, ["search", id, "tidewater coat", "--limit", "50"])).results.map((r: { id: string }) => r.id);
    expect(left).toHaveLength(10);
    const bad = await runCli(["--project", project, "--json", "objects", "delete", "--filter", "colour:red", "--yes"]);
    expect(bad.exitCode).toBe(4);
  });

  it("reads ids on stdin whole, whatever the characters and however the pipe cuts them", async () => {
    const project = tempProject();
    const ids = Array.from({ length: 6000 }, (_, i) => `日本é${String(i).padStart(5, "0")}`); // about 90 KB: more than one pipe read
    await cliJson(project, ["objects", "add", "-"], { input: ids.map((id) => JSON.stringify({ id, title: "x" })).join("\n") });
    const deleted = await runCli(["--project", project, "--json", "objects", "delete", "-"], { input: ids.join("\n") });
    expect(deleted.exitCode, deleted.stderr.slice(0, 500)).toBe(0);
    expect(JSON.parse(deleted.stdout).count).toBe(6000);
  });

  it("over HTTP: DELETE /v1/objects with ids or a filter, all or none", async () => {
    const project = tempProject();
    await cliJson(project, ["objects", "add", "-"], { input: goods });
    const { id } = await cliJson(project, ["index", "create", "--searchable", "title", "--filterable", "category", "--wait"]);
    const server = await serve(project, ["--no-auth", "--no-worker"]);
    const remove = (body: unknown) => call(`${server.url}/v1/objects`, null, { method: "DELETE", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
    try {
      expect((await remove({ ids: ["g1", "g2"] })).json).toEqual({ count: 2, deleted: ["g1", "g2"] });
      const missing = await remove({ ids: ["g3", "nope"] });
      expect([missing.status, missing.json.errors[0].code]).toEqual([404, "OBJECT_NOT_FOUND"]);
      expect((await remove({ filter: "category:sale", index: id })).json.count).toBe(5);
      for (const body of [{}, [], ["g3"], null, { ids: [] }, { ids: ["g3"], filter: "category:new", index: id }, { filter: "category:new" }, { ids: "g3" }, { ids: [""] }, { id: "g3" }]) {
        const refused = await remove(body);
        expect(refused.status, JSON.stringify(body)).toBe(422);
      }
    } finally {
      await server.stop();
    }
    expect((await cliJson(project, ["objects", "list"])).objects).toHaveLength(13);
  });
});

describe("--project naming the folder that holds .semsearch", () => {
  it("means that project, for reads and writes alike; an empty project says which folder it looked in", async () => {
    const work = path.dirname(tempProject());
    await runCli(["objects", "add", "-"], { input: forty, cwd: work }); // makes work/.semsearch
    const created = await runCli(["--project", work, "--json", "index", "create", "--searchable", "title"]);
    expect(created.exitCode, created.stderr).toBe(0);
    const listed = JSON.parse((await runCli(["--project", path.join(work, ".semsearch"), "--json", "index", "list"])).stdout).indexes;
    expect(listed.map((index: { id: string }) => index.id)).toEqual([JSON.parse(created.stdout).id]);
    expect(existsSync(path.join(work, "catalog.json"))).toBe(false);
    expect(existsSync(path.join(work, "data"))).toBe(false);
    const empty = path.dirname(tempProject());
    expect((await runCli(["--project", empty, "index", "list", "--format", "table"])).stdout).toBe(`No indexes in ${empty}. Create one with \`semsearch index create\`.\n`);
  });
});

describe("lists in a pipe", () => {
  it("print tab-separated values with a header line, whole; --format table|tsv|json|jsonl chooses", async () => {
    const project = tempProject();
    const long = `a-very-long-identifier-that-a-table-would-cut-${"x".repeat(40)}`;
    await cliJson(project, ["objects", "add", "-"], { input: `${forty}\n${JSON.stringify({ id: long, title: "Tidal\tenergy with a tab", body: "tides" })}` });
    const { id } = await cliJson(project, ["index", "create", "--searchable", "title,body", "--wait"]);
    const piped = await runCli(["--project", project, "search", id, "tidal energy", "--object-fields", "title,price", "--limit", "50"]);
    expect(piped.exitCode, piped.stderr).toBe(0);
    const lines = piped.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe("rank\tid\tscore\ttext\ttitle\tprice");
    expect(lines).toHaveLength(42);
    expect(lines.every((line) => line.split("\t").length === 6)).toBe(true);
    expect(lines.map((line) => line.split("\t")[1])).toContain(long); // never cut
    expect(piped.stdout).not.toMatch(/[│┌─]/);
    const table = await runCli(["--project", project, "search", id, "tidal energy", "--format", "table"]);
    expect(table.stdout).toMatch(/│ 1\s+│/);
    const json = await runCli(["--project", project, "search", id, "tidal energy", "--format", "json"]);
    expect(JSON.parse(json.stdout)).toEqual(await cliJson(project, ["search", id, "tidal energy"]));
    const jsonl = await runCli(["--project", project, "search", id, "tidal energy", "--format", "jsonl", "--limit", "3"]);
    expect(jsonl.stdout.trimEnd().split("\n").map((line) => JSON.parse(line).id)).toHaveLength(3);
    const indexes = await runCli(["--project", project, "index", "list"]);
    expect(indexes.stdout.split("\n")[0]).toBe("id\tname\ttype\tsearch\tmodel\tstate\tuploaded\tprocessing\tready\terror\tcreated");
    expect(indexes.stdout.split("\n")[1]?.split("\t").slice(0, 1)).toEqual([id]);
    const objects = await runCli(["--project", project, "objects", "list", "--limit", "2"]);
    expect(objects.stdout.split("\n").slice(0, 2).map((line) => line.split("\t")[0])).toEqual(["id", long]);
    const wrong = await runCli(["--project", project, "--json", "index", "list", "--format", "jsonl"]);
    expect(wrong.exitCode).toBe(2);
    for (const conflict of [["--format", "tsv", "--jsonl"], ["--format", "json", "--jsonl"], ["--format", "jsonl", "--json"]]) {
      expect((await runCli(["--project", project, "search", id, "tidal", ...conflict])).exitCode, conflict.join(" ")).toBe(2);
    }
    const unknown = await runCli(["--project", project, "index", "list", "--format", "xml"]);
    expect([unknown.exitCode, unknown.stderr]).toEqual([2, expect.stringContaining('expected table, tsv, json or jsonl, got "xml"')]);
    // JSON Lines, either spelling, is for programs: warnings and errors are JSON lines on stderr, as with --json
    for (const jsonlFlag of [["--jsonl"], ["--format", "jsonl"]]) {
      const warned = await runCli(["--project", project, "search", id, "tidal", "--object-fields", "titel", ...jsonlFlag]);
      expect(JSON.parse(warned.stderr).warnings[0].code, jsonlFlag.join(" ")).toBe("FIELD_NOT_FOUND");
      const failed = await runCli(["--project", project, "search", "idx_nope", "tidal", ...jsonlFlag]);
      expect([failed.exitCode, JSON.parse(failed.stderr).errors[0].code], jsonlFlag.join(" ")).toEqual([3, "INDEX_NOT_FOUND"]);
    }
  });
});

describe("a search naming a field no object has", () => {
  it("warns on stderr with the closest field, for a filter and for the object fields", async () => {
    const project = tempProject();
    const items = Array.from({ length: 6 }, (_, i) => JSON.stringify({ id: `c${i}`, title: `Coat ${i}`, color: i % 2 ? "red" : "blue" })).join("\n");
    await cliJson(project, ["objects", "add", "-"], { input: items });
    // (index create warns already: none of the stored objects has "colour")
    const created = await runCli(["--project", project, "--json", "index", "create", "--searchable", "title", "--filterable", "color,colour", "--wait"]);
    const { id } = JSON.parse(created.stdout);
    const filtered = await runCli(["--project", project, "search", id, "coat", "--filter", "colour:red"]);
    expect(filtered.exitCode, filtered.stderr).toBe(0);
    expect(filtered.stderr).toContain('No indexed object has the field "colour" (did you mean "color"?): the filter\'s condition on it matches nothing.');
    const fields = await runCli(["--project", project, "--json", "search", id, "coat", "--object-fields", "titel,color"]);
    expect(JSON.parse(fields.stderr).warnings[0]).toEqual({ code: "FIELD_NOT_FOUND", message: 'No stored object has the field "titel" (did you mean "title"?) named in the object fields: it shows nothing.' });
    const fine = await runCli(["--project", project, "search", id, "coat", "--filter", "color:red", "--object-fields", "title"]);
    expect(fine.stderr).toBe("");
    // on a page with no results too: the field is checked against the stored objects
    const empty = await runCli(["--project", project, "--json", "search", id, "coat", "--filter", "color:green", "--object-fields", "titel"]);
    expect([JSON.parse(empty.stdout).results, JSON.parse(empty.stderr).warnings]).toEqual([[], [{ code: "FIELD_NOT_FOUND", message: expect.stringContaining('"titel" (did you mean "title"?)') }]]);
    // a filterable field that holds lists of objects cannot be filtered on: index create says so
    await cliJson(project, ["objects", "add", "-"], { input: '{"id":"l1","title":"Coat","tags":["sale","new"],"variants":[{"size":"M"}]}' });
    const lists = await runCli(["--project", project, "--json", "index", "create", "--searchable", "title", "--filterable", "tags,variants"]);
    expect(JSON.parse(lists.stderr).warnings).toEqual([{ code: "FILTER_FIELD_LISTS", message: expect.stringContaining('"variants" (in 1 of 7 sampled objects)') }]);
  });
});
