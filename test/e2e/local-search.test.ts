/**
 * The local channel: a running `semsearch serve` answers this machine's `semsearch search` over a
 * socket (its model already warm), with exactly the output of a search in the CLI's own process; a
 * server that is gone, killed or replaced is never an error.
 */
import { readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliJson, ROOT, runCli, SAMPLE, tempProject } from "../helpers/cli.js";
import { serve, type Served } from "../helpers/serve.js";
import { localSocketPath, prepareSocketDir } from "../../src/engine/local-socket.js";
import { waitFor, within } from "../helpers/wait.js";

const project = tempProject();
let server: Served | undefined;

const localLines = (served: Served) => served.stderr().split("\n").filter((line) => line.includes('"method":"LOCAL"'));
const search = (args: string[]) => runCli(["--project", project, "search", "articles", ...args]);

const VERSION = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")).version as string;

/** The first line of the server's log holding `text`, waiting for it (the URL is printed before the log lines). */
async function logged(served: Served, text: string): Promise<string> {
  const line = () => served.stderr().split("\n").find((l) => l.includes(text));
  await waitFor(`${text} in the server's log`, () => line() !== undefined);
  return line() as string;
}

/** The socket a server logged it answers on. */
async function socketOf(served: Served): Promise<string> {
  return JSON.parse(await logged(served, '"answering local searches"')).socket as string;
}

/**
 * Sends raw lines to a socket and resolves with what comes back once `answers` answers (lines other
 * than acknowledgements) have come, or the server closes the connection; rejects after 60 s.
 */
function raw(socketPath: string, data: string, answers = 1): Promise<string> {
  const exchange = new Promise<string>((resolve, reject) => {
    const socket = createConnection(socketPath);
    let answer = "";
    socket.on("data", (chunk) => {
      answer += chunk;
      const complete = answer.split("\n").slice(0, -1).filter((line) => !line.includes('"ack":true'));
      if (complete.length >= answers) {
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on("close", () => resolve(answer));
    socket.on("error", reject);
    socket.write(data);
  });
  return within(`${answers} answer(s) on the local socket`, exchange);
}

/** The one answer among the lines a server sent (after its acknowledgement). */
function answerOf(text: string): any {
  const answers = text.trim().split("\n").map((line) => JSON.parse(line)).filter((a) => a.ack !== true);
  expect(answers).toHaveLength(1);
  return answers[0];
}

/** Waits until the server logs that its models are warm (or 60 s). */
async function warm(served: Served): Promise<void> {
  for (let i = 0; i < 600 && !served.stderr().includes('"event":"warm"'); i++) await new Promise((r) => setTimeout(r, 100));
}

beforeAll(async () => {
  await cliJson(project, ["objects", "add", SAMPLE]);
  await cliJson(project, ["index", "create", "--name", "articles", "--searchable", "title,body", "--highlights", "--filterable", "topic,year", "--field-type", "year=float", "--wait"]);
  server = await serve(project, ["--no-auth"]);
  await warm(server);
});

afterAll(async () => {
  await server?.stop();
});

describe("searches answered by a running server", () => {
  it("prints exactly what a search in the CLI's own process prints, in every output mode", async () => {
    const cases = [
      ["--json", "how do plants make energy"],
      ["--json", "energy", "--limit", "3", "--offset", "2", "--object-fields", "title,year"],
      ["--json", "cells", "--result-fields", "highlights", "--object-fields", "*"],
      ["--json", "energy", "--filter", "topic:biology AND year:>=2020"],
      ["--json", "energy", "--all", "--limit", "4"],
      ["energy", "--jsonl", "--all", "--limit", "3"],
      ["cells", "--no-interactive", "--result-fields", "highlights"],
      ["--json", "energy", "--mode", "vector", "--page", "2"],
    ];
    for (const args of cases) {
      const before = localLines(server!).length;
      const [first, ...rest] = args[0] === "--json" ? [args[0], ...args.slice(1)] : [null, ...args];
      const global = first ? [first] : [];
      const viaServer = await runCli(["--project", project, ...global, "search", "articles", ...rest]);
      const here = await runCli(["--project", project, ...global, "search", "articles", ...rest, "--in-process"]);
      expect(viaServer.exitCode, viaServer.stderr).toBe(0);
      expect(viaServer.stdout, args.join(" ")).toBe(here.stdout);
      expect(viaServer.stderr).toBe(here.stderr);
      expect(localLines(server!).length, `${args.join(" ")} went through the server`).toBeGreaterThan(before);
    }
  });

  it("answers the reading commands too, exactly as they print in the CLI's own process", async () => {
    const cases = [["index", "list"], ["index", "get", "articles"], ["index", "status", "articles"], ["objects", "get", "photosynthesis"], ["objects", "list", "--limit", "5", "--offset", "3"], ["objects", "get", "nosuch"], ["index", "get", "nosuch"], ["objects", "list", "--limit", "0"]];
    for (const args of cases) {
      for (const json of [[], ["--json"]]) {
        const before = localLines(server!).length;
        const viaServer = await runCli(["--project", project, ...json, ...args]);
        const here = await runCli(["--project", project, ...json, "--in-process", ...args]);
        expect(viaServer.exitCode, args.join(" ")).toBe(here.exitCode);
        expect(viaServer.stdout, args.join(" ")).toBe(here.stdout);
        expect(viaServer.stderr, args.join(" ")).toBe(here.stderr);
        expect(localLines(server!).length, `${args.join(" ")} went through the server`).toBe(before + 1);
      }
    }
  });

  it("reports the server's errors as the CLI's own: same message, caret and exit code", async () => {
    for (const args of [["nosuch", "x"], ["articles", "x", "--filter", "year:>>3"], ["articles", "x", "--filter", "nosuchfield:1"], ["articles", "x", "--limit", "100000"]]) {
      for (const json of [[], ["--json"]]) {
        const viaServer = await runCli(["--project", project, ...json, "search", ...args]);
        const here = await runCli(["--project", project, ...json, "search", ...args, "--in-process"]);
        expect(viaServer.exitCode, args.join(" ")).toBe(here.exitCode);
        expect(viaServer.exitCode).toBeGreaterThan(1);
        expect(viaServer.stderr).toBe(here.stderr);
        expect(viaServer.stdout).toBe("");
      }
    }
  });

  it("refuses what is not a search request, and keeps answering", async () => {
    const socket = await socketOf(server!);
    // not JSON; no version (an older or newer client); another protocol; this version with a wrong shape or types
    const lines = ["not json", '{"v":1}', '{"v":99,"op":"search"}', JSON.stringify({ v: 1, version: VERSION, op: "search", args: [1, {}] }), JSON.stringify({ v: 1, version: VERSION, op: "search", args: ["articles", { query: "x", limit: "5" }] })];
    const received = (await raw(socket, lines.map((line) => `${line}\n`).join(""), lines.length)).trim().split("\n").map((line) => JSON.parse(line));
    // every request is acknowledged as it is read, then answered in order
    expect(received.filter((a) => a.ack === true)).toHaveLength(lines.length);
    const answers = received.filter((a) => a.ack !== true);
    expect(answers.map((a) => a.error?.code)).toEqual(["BAD_REQUEST", "LOCAL_VERSION", "LOCAL_VERSION", "BAD_REQUEST", "BAD_REQUEST"]);
    const good = answerOf(await raw(socket, `${JSON.stringify({ v: 1, version: VERSION, op: "search", args: ["articles", { query: "energy", limit: 2, constructor: "x" }] })}\n`));
    expect(good.result.hits).toHaveLength(2);
    // writes are not among the operations: the project is untouched
    const write = answerOf(await raw(socket, `${JSON.stringify({ v: 1, version: VERSION, op: "deleteIndex", args: ["articles"] })}\n`));
    expect(write.error.code).toBe("BAD_REQUEST");
    expect((await runCli(["--project", project, "--json", "index", "get", "articles", "--in-process"])).exitCode).toBe(0);
    const huge = await raw(socket, "x".repeat(2 * 1024 * 1024));
    expect(answerOf(huge).error.code).toBe("BAD_REQUEST");
    // blank lines are not requests (a client with more than 64 requests waiting is cut off): the one request after them is the only one answered
    const listing = `${JSON.stringify({ v: 1, version: VERSION, op: "listIndexes", args: [] })}\n`;
    const afterBlanks = await raw(socket, "\n".repeat(64 * 1024) + listing);
    expect(afterBlanks.trim().split("\n").map((line) => JSON.parse(line).ack ?? "answer")).toEqual([true, "answer"]);
    expect(answerOf(afterBlanks).result[0].name).toBe("articles");
    // a client that sends 200 requests at once and never reads: cut off, or held to one answer at a
    // time by backpressure; either way the server goes on answering others
    const flooder = createConnection(socket);
    flooder.on("error", () => {});
    // the server has taken the flood in once it acknowledges (a readable flooder) or cuts the client off
    const flooded = new Promise((resolve) => {
      flooder.once("readable", resolve);
      flooder.once("close", resolve);
    });
    flooder.write(listing.repeat(200));
    await within("the server to take the flood in", flooded);
    const meanwhile = await search(["--json", "energy"]);
    expect(meanwhile.exitCode, meanwhile.stderr).toBe(0);
    flooder.destroy();
    // a client that ends its side after sending still gets its answer
    const halfClosed = await new Promise<string>((resolve, reject) => {
      const client = createConnection(socket);
      let text = "";
      client.on("data", (chunk) => (text += chunk));
      client.on("close", () => resolve(text));
      client.on("error", reject);
      client.end(`${JSON.stringify({ v: 1, version: VERSION, op: "listIndexes", args: [] })}\n`);
    });
    expect(answerOf(halfClosed).result[0].name).toBe("articles");
    const after = await search(["--json", "energy"]);
    expect(after.exitCode, after.stderr).toBe(0);
  });

  it("survives names that cannot be logged as they are: a lone surrogate, an emoji cut at the log's limit", async () => {
    const before = localLines(server!).length;
    const cut = await runCli(["--project", project, "--json", "search", `${"a".repeat(199)}😀`, "plants"]);
    expect(cut.exitCode, cut.stderr).toBe(3);
    const lone = answerOf(await raw(await socketOf(server!), `${JSON.stringify({ v: 1, version: VERSION, op: "getIndex", args: ["\ud800"] })}\n`));
    expect(lone.error.code).toBe("INDEX_NOT_FOUND");
    expect(server!.child.exitCode).toBeNull();
    expect((await search(["--json", "energy"])).exitCode).toBe(0);
    expect(localLines(server!).length).toBe(before + 3);
  });
});

describe("when no server answers", () => {
  it("runs the command itself when whatever listens on the socket is not a server of this version", async () => {
    await server!.stop();
    server = undefined;
    const socketPath = localSocketPath(project);
    expect(prepareSocketDir(socketPath)).toBe(true);
    const here = await search(["--json", "energy", "--in-process"]);
    const listed = await runCli(["--project", project, "--json", "--in-process", "index", "list"]);
    const answers: Record<string, (socket: Socket) => void> = {
      "another version": (socket) => socket.end(`${JSON.stringify({ v: 1, error: { name: "UsageError", code: "LOCAL_VERSION", message: "other" } })}\n`),
      "another protocol": (socket) => socket.end(`${JSON.stringify({ v: 2, result: { hits: [] } })}\n`),
      "busy": (socket) => socket.end(`${JSON.stringify({ v: 1, error: { name: "RequestRefusedError", code: "BUSY", message: "busy" } })}\n`),
      "its machine's fault": (socket) => socket.end(`${JSON.stringify({ v: 1, ack: true })}\n${JSON.stringify({ v: 1, error: { name: "EnvironmentError", code: "EMFILE", message: "Too many open files" } })}\n`),
      "its own bug": (socket) => socket.end(`${JSON.stringify({ v: 1, ack: true })}\n${JSON.stringify({ v: 1, error: { name: "InternalError", code: "INTERNAL", message: "The server failed" } })}\n`),
      "no acknowledgement (a stopped server)": () => {},
      "not JSON": (socket) => socket.end("hello\n"),
      "a hang-up": (socket) => socket.destroy(),
    };
    for (const [what, respond] of Object.entries(answers)) {
      let asked = 0;
      const fake: Server = createServer((socket) => {
        socket.once("data", () => {
          asked++;
          respond(socket);
        });
      });
      await new Promise<void>((resolve) => fake.listen(socketPath, resolve));
      try {
        const result = await search(["--json", "energy"]);
        expect(result.exitCode, `${what}: ${result.stderr}`).toBe(0);
        expect(result.stdout, what).toBe(here.stdout);
        expect(result.stderr, what).toBe("");
        // (index list takes the same path: asked for three of the answers, to keep the test short)
        const listToo = ["another version", "no acknowledgement (a stopped server)", "a hang-up"].includes(what);
        if (listToo) expect((await runCli(["--project", project, "--json", "index", "list"])).stdout, what).toBe(listed.stdout);
        expect(asked, `${what}: the CLI asked the socket first`).toBe(listToo ? 2 : 1);
      } finally {
        await new Promise<void>((resolve) => fake.close(() => resolve()));
      }
    }
    server = await serve(project, ["--no-auth"]);
  });

  it("searches in the CLI's process after a server is killed, and the next server takes the socket over", async () => {
    const killed = server!;
    const socket = await socketOf(killed);
    await killed.stop("SIGKILL");
    server = undefined;
    const here = await search(["--json", "energy", "--in-process"]);
    const after = await search(["--json", "energy"]);
    expect(after.exitCode, after.stderr).toBe(0);
    expect(after.stdout).toBe(here.stdout);
    server = await serve(project, ["--no-auth"]);
    expect(await socketOf(server)).toBe(socket);
    const again = await search(["--json", "energy"]);
    expect(again.stdout).toBe(here.stdout);
    expect(localLines(server)).toHaveLength(1);
  });

  it("runs the command itself when the server is stopped (SIGSTOP), and uses it again once it runs", async () => {
    const pid = server!.child.pid as number;
    const here = await search(["--json", "energy", "--in-process"]);
    const before = localLines(server!).length;
    process.kill(pid, "SIGSTOP");
    try {
      const started = Date.now();
      const result = await search(["--json", "energy"]);
      // left at the missing acknowledgement (2 s), not at the answer's 60 s timeout
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toBe(here.stdout);
    } finally {
      process.kill(pid, "SIGCONT");
    }
    expect((await search(["--json", "energy"])).stdout).toBe(here.stdout);
    await logged(server!, '"status":200'); // the stopped request is answered (to nobody) once it runs
    expect(localLines(server!).length).toBeGreaterThanOrEqual(before + 1);
  });

  it("serves by the project's real path: a symbolic link retargeted later does not switch its data", async () => {
    const dir = path.dirname(project);
    const other = path.join(dir, "other");
    await cliJson(other, ["objects", "add", "-"], { input: '{"id":"b-only","title":"energy energy energy"}\n' });
    await cliJson(other, ["index", "create", "--name", "articles", "--searchable", "title", "--wait"]);
    const link = path.join(dir, "link");
    symlinkSync(project, link);
    await server!.stop();
    server = await serve(link, ["--no-auth"]);
    await socketOf(server);
    const here = await search(["--json", "energy", "--in-process"]);
    rmSync(link);
    symlinkSync(other, link);
    const before = localLines(server).length;
    const result = await search(["--json", "energy"]);
    expect(result.stdout).toBe(here.stdout);
    expect(localLines(server).length).toBe(before + 1);
  });

  it("serves without a socket, and says why, when its directory cannot be made", async () => {
    const file = path.join(path.dirname(project), "not-a-dir");
    writeFileSync(file, "");
    const odd = await serve(project, ["--no-auth", "--no-access-log"], { XDG_RUNTIME_DIR: file });
    try {
      expect(await logged(odd, '"not answering local searches"')).toContain("cannot create the directory");
      expect(odd.child.exitCode).toBeNull();
    } finally {
      await odd.stop();
    }
  });

  it("a second server of the project leaves the socket to the first; --no-local-socket opens none", async () => {
    const second = await serve(project, ["--no-auth"]);
    try {
      expect(await logged(second, '"not answering local searches"')).toContain("another server of this project answers");
    } finally {
      await second.stop();
    }
    // the first server's socket is still its own after the second stopped
    const before = localLines(server!).length;
    expect((await search(["--json", "energy"])).exitCode).toBe(0);
    expect(localLines(server!).length).toBe(before + 1);

    await server!.stop();
    server = await serve(project, ["--no-auth", "--no-local-socket"]);
    await logged(server, '"event":"warm"');
    expect((await search(["--json", "energy"])).exitCode).toBe(0);
    expect(localLines(server)).toHaveLength(0);
    expect(server.stderr()).not.toContain("local searches");
  });
});
