/**
 * What semsearch leaves on the machine and what it contacts, through the real CLI, with the
 * environment a user's shell has (no CI variables: onnxruntime keeps its telemetry off by itself
 * when it sees one). With a fresh HOME and TMPDIR, a project is filled, indexed by the background
 * worker with the bundled model and with a Hugging Face model downloaded from a local stand-in for
 * the hub, searched one-shot, through a server's local socket and over HTTP. Afterwards nothing
 * exists outside the project, the models folder and the local socket's directory, and every name
 * looked up and every address bound, connected or sent to is one docs/behaviour.md lists (seen by a
 * preloaded library, test/helpers/net-log.c, in every process semsearch starts).
 *
 * Also: arguments as long as the documented limits allow. onnxruntime's telemetry read the command
 * line into a match that overflowed the stack, so such an argument ended the process with SIGSEGV.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHub, type HubServer } from "../../src/torture/hub-server.js";
import { cliJson, ROOT, runCli, SAMPLE, tempProject, type RunOptions } from "../helpers/cli.js";
import { Terminal } from "../helpers/pty.js";
import { call, serve } from "../helpers/serve.js";
import { tempDir } from "../helpers/temp.js";

describe("long queries and filters, as arguments up to the documented limits and from files", () => {
  let project = "";
  let id = "";
  beforeAll(async () => {
    project = tempProject();
    await cliJson(project, ["objects", "add", SAMPLE]);
    ({ id } = await cliJson<{ id: string }>(project, ["index", "create", "--searchable", "title,body", "--filterable", "topic", "--wait"]));
  });

  const search = (args: string[]) => runCli(["--project", project, "--json", "search", id, ...args]);

  it("a 10,000-character query (the longest allowed) is answered", async () => {
    const words = Array.from({ length: 2_000 }, (_, i) => ["river", "bike", "moon", "sleep"][i % 4]).join(" ");
    const query = words.padEnd(10_000, "x").slice(0, 10_000);
    const result = await search([query]);
    expect(result.signal).toBeNull();
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).results.length).toBeGreaterThan(0);
  });

  it("a filter of 1,000 conditions (the most allowed) and a long --object-fields are answered", async () => {
    const filter = Array.from({ length: 1_000 }, (_, i) => `topic:"topic number ${i}"`).join(" OR ");
    expect(filter.length).toBeGreaterThan(26_000);
    const filtered = await search(["bicycle", "--filter", filter]);
    expect(filtered.signal).toBeNull();
    expect(filtered.exitCode, filtered.stderr).toBe(0);
    expect(JSON.parse(filtered.stdout).pagination.statistics).toEqual({ total: 0, total_calculation: "exact" });
    const fields = Array.from({ length: 3_000 }, (_, i) => `field${i}`).join(",");
    const listed = await search(["bicycle", "--object-fields", `title,${fields}`]);
    expect(listed.signal).toBeNull();
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).results[0].object.title).toMatch(/bicycle/i);
  });

  const ids = (stdout: string) => (JSON.parse(stdout) as { results: { id: string }[] }).results.map((result) => result.id);

  it("--query-file, --filter-file and - give the same results as arguments, without the file's last line end", async () => {
    const dir = tempDir();
    const filterFile = path.join(dir, "filter.txt");
    writeFileSync(filterFile, 'topic:"biology"\nOR topic:medicine\n');
    const queryFile = path.join(dir, "query.txt");
    writeFileSync(queryFile, "how do cells make energy\r\n");
    const expected = ids((await runCli(["--project", project, "--json", "search", id, "how do cells make energy", "--filter", 'topic:"biology" OR topic:medicine'])).stdout);
    expect(expected.length).toBeGreaterThan(1);
    for (const [args, input] of [
      [["--query-file", queryFile, "--filter-file", filterFile], ""],
      [["-", "--filter-file", filterFile], "how do cells make energy\n"],
      [["--query-file", "-", "--filter-file", filterFile], "how do cells make energy"],
      [["how", "do", "cells", "make", "energy", "--filter-file", "-"], 'topic:"biology" OR topic:medicine\n'],
    ] as const) {
      const result = await runCli(["--project", project, "--json", "search", id, ...args], { input });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(ids(result.stdout)).toEqual(expected);
    }
  });

  it("a 10,000-character query and a 1,000-condition filter from files are answered; larger ones are refused with their limits", async () => {
    const dir = tempDir();
    const [queryFile, filterFile] = [path.join(dir, "q.txt"), path.join(dir, "f.txt")];
    writeFileSync(queryFile, "bicycle ".repeat(1_250));
    writeFileSync(filterFile, Array.from({ length: 999 }, (_, i) => `topic:"topic number ${i}" OR`).join("\n") + " topic:repair");
    const answered = await runCli(["--project", project, "--json", "search", id, "--query-file", queryFile, "--filter-file", filterFile]);
    expect(answered.exitCode, answered.stderr).toBe(0);
    expect(ids(answered.stdout)).toContain("bicycle-repair");
    writeFileSync(queryFile, "bicycle ".repeat(1_251));
    const long = await runCli(["--project", project, "search", id, "--query-file", queryFile]);
    expect([long.exitCode, long.stderr]).toEqual([4, expect.stringMatching(/query is 10,007 characters long; at most 10,000/)]);
    writeFileSync(filterFile, "x".repeat(1024 * 1024 + 1));
    const huge = await runCli(["--project", project, "search", id, "bicycle", "--filter-file", filterFile]);
    expect([huge.exitCode, huge.stderr]).toEqual([2, expect.stringContaining(`--filter-file ${filterFile}: more than`)]);
  });

  it("in a terminal, standard input under any name is refused rather than waited on", async () => {
    for (const name of ["-", "/dev/stdin"]) {
      const terminal = new Terminal(["--project", project, "search", id, "--query-file", name, "--no-interactive"]);
      try {
        await terminal.waitFor(/standard input, but it is a terminal/);
        expect(await terminal.exited).toBe(2);
      } finally {
        terminal.kill();
      }
    }
  });

  it("says what is wrong with the sources", async () => {
    const cases: [string[], string, RegExp][] = [
      [[], "", /No query: give it as words, as - to read it from standard input, or with --query-file/],
      [["bike", "--query-file", SAMPLE], "", /as words or with --query-file, not both/],
      [["bike", "--filter", "topic:x", "--filter-file", SAMPLE], "", /--filter or --filter-file, not both/],
      [["-", "--filter-file", "-"], "bike", /Only one of the query and the filter can be read from standard input/],
      [["--query-file", "/no/such/file"], "", /Cannot read \/no\/such\/file: no such file/],
      [["--query-file", ROOT], "", /it is a directory/],
    ];
    for (const [args, input, message] of cases) {
      const result = await runCli(["--project", project, "search", id, ...args], { input });
      expect([result.exitCode, result.stdout, result.stderr]).toEqual([2, "", expect.stringMatching(message)]);
    }
  });
});

/** The preloaded library that records lookups and socket addresses, built for the test with the system's C compiler (node-gyp's, which npm needs anyway). */
function netLogLibrary(): string {
  const out = path.join(tempDir("semsearch-netlog-"), "net-log.so");
  const failures: string[] = [];
  for (const compiler of ["cc", "gcc", "g++"]) {
    const built = spawnSync(compiler, ["-x", "c", "-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o", out, path.join(ROOT, "test", "helpers", "net-log.c"), "-ldl"], { encoding: "utf8" });
    if (built.status === 0) return out;
    failures.push(`${compiler}: ${built.error?.message ?? built.stderr}`);
  }
  throw new Error(`cannot build test/helpers/net-log.c:\n${failures.join("\n")}`);
}

/** Every path under `dir`, relative to it, directories with a trailing slash. */
function tree(dir: string, prefix = ""): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    const relative = prefix + name;
    return statSync(full).isDirectory() ? [`${relative}/`, ...tree(full, `${relative}/`)] : [relative];
  });
}

describe("what semsearch writes and contacts", () => {
  let hub: HubServer;
  beforeAll(async () => {
    hub = await startHub({ "tiny/mean": path.join(ROOT, "fixtures", "models", "tiny-mean") });
  });
  afterAll(() => hub.close());

  it("writes only in the project, the models folder and the local socket's directory; contacts only the hub and its own sockets", async () => {
    // (a short root: the socket's usual place, $TMPDIR/semsearch-<uid>/<24 hex>.sock, must stay within
    // the 100 bytes semsearch allows a socket path, or it would move to /tmp)
    const root = tempDir("fp-");
    const [home, tmp, project] = ["home", "tmp", "project"].map((name) => path.join(root, name)) as [string, string, string];
    mkdirSync(home);
    mkdirSync(tmp);
    const netLog = path.join(root, "net.log");
    const env: RunOptions["env"] = {
      HOME: home,
      TMPDIR: tmp,
      // the defaults: models in ~/.cache/semsearch/models, the socket in $TMPDIR/semsearch-<uid>/
      SEMSEARCH_MODELS: undefined,
      XDG_CACHE_HOME: undefined,
      XDG_RUNTIME_DIR: undefined,
      SEMSEARCH_HF_ENDPOINT: hub.url,
      LD_PRELOAD: netLogLibrary(),
      SEMSEARCH_NET_LOG: netLog,
    };
    const json = <T = any>(args: string[]) => cliJson<T>(project, args, { env });

    await json(["objects", "add", SAMPLE]);
    const bundled = (await json<{ id: string }>(["index", "create", "--searchable", "title,body", "--highlights", "--wait"])).id;
    const downloaded = (await json<{ id: string }>(["index", "create", "--model", "tiny/mean", "--searchable", "body", "--wait"])).id;
    expect((await json(["search", bundled, "fixing a flat tyre", "--result-fields", "highlights"])).results[0].id).toBe("bicycle-repair");
    expect((await json(["search", downloaded, "bicycle"])).results.length).toBeGreaterThan(0);

    const server = await serve(project, ["--no-auth"], env);
    try {
      // the CLI's search goes through the server's local socket; the test's own request over TCP
      expect((await json(["search", bundled, "tides"])).results[0].id).toBe("moon-tides");
      const answer = await call(`${server.url}/v1/indexes/${bundled}/search?query=volcano`, null);
      expect(answer.status, answer.text).toBe(200);
      const added = await call(`${server.url}/v1/objects`, null, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id: "extra", title: "Kettles", body: "A kettle keeps water hot." }) });
      expect(added.status, added.text).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    expect(await json(["index", "status", bundled, "--wait"])).toMatchObject({ status: { READY: 41 } });
    // the background worker exits when it has nothing left to do
    for (let i = 0; i < 600 && (await json(["worker", "status"])).running; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await json(["worker", "status"])).running).toBe(false);

    const uid = process.getuid?.() ?? 0;
    const models = ".cache/semsearch/models/";
    expect(tree(home).filter((file) => !`${file}/`.startsWith(models) && !models.startsWith(file))).toEqual([]);
    expect(tree(path.join(home, models)).some((file) => file.startsWith("hub/tiny/mean/"))).toBe(true);
    expect(tree(tmp)).toEqual([`semsearch-${uid}/`]);

    const socketDir = path.join(tmp, `semsearch-${uid}`);
    const hubPort = new URL(hub.url).port;
    const events = readFileSync(netLog, "utf8").trim().split("\n").map((line) => line.replace(/^\d+ /, ""));
    const documented = (event: string): boolean =>
      event === `connect inet 127.0.0.1:${hubPort}` || // the hub (SEMSEARCH_HF_ENDPOINT)
      event === "bind inet 127.0.0.1:0" || // serve --port 0
      event.startsWith(`bind unix ${socketDir}/`) || // serve's local socket
      event.startsWith(`connect unix ${socketDir}/`); // the CLI asking a server of the project
    expect(events.filter((event) => !documented(event))).toEqual([]);
    expect(events).toContain(`connect inet 127.0.0.1:${hubPort}`);
    expect(events.some((event) => event.startsWith(`connect unix ${socketDir}/`))).toBe(true);
  });
});
