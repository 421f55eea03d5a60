/**
 * `objects add <folder> --watch` (issue 29), through the real CLI and real file system events:
 * create, edit in place, save by rename, delete, move a folder; a watcher killed in a burst of
 * changes, and its restart reconciling the project with the folder exactly.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, cliJson, tempProject, userEnv } from "../helpers/cli.js";
import { addObjects, ok } from "../helpers/in-process.js";
import { waitFor } from "../helpers/wait.js";

interface Watcher {
  child: ChildProcessWithoutNullStreams;
  /** JSON lines printed so far. */
  lines: Record<string, unknown>[];
  stderr: () => string;
  /** Resolves when a line satisfying `test` has been printed (after those already seen when `from` is given). */
  until(test: (line: Record<string, unknown>) => boolean, from?: number): Promise<Record<string, unknown>>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running: Watcher[] = [];
afterEach(() => {
  for (const watcher of running.splice(0)) watcher.child.kill("SIGKILL");
});

function startWatcher(project: string, folder: string, env: Record<string, string> = {}): Watcher {
  const child = spawn(process.execPath, [BIN, "--project", project, "--json", "objects", "add", folder, "--watch"], { env: userEnv(env), stdio: "pipe" });
  const lines: Record<string, unknown>[] = [];
  let stderr = "";
  let buffer = "";
  const waiters: (() => void)[] = [];
  child.stdout.on("data", (chunk: Buffer) => {
    buffer += chunk.toString("utf8");
    for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
      lines.push(JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>);
      buffer = buffer.slice(nl + 1);
    }
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const watcher: Watcher = {
    child,
    lines,
    stderr: () => stderr,
    exited,
    async until(test, from = 0) {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const found = lines.slice(from).find(test);
        if (found) return found;
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no such line; got ${JSON.stringify(lines)}\nstderr: ${stderr}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 500);
        });
      }
    },
  };
  running.push(watcher);
  return watcher;
}

/** The project's objects as `id → hash`, and the folder's files as `stored path → hash`. */
async function projectFiles(project: string): Promise<Record<string, string>> {
  const { objects } = await cliJson(project, ["objects", "list", "--limit", "1000"]);
  return Object.fromEntries(objects.map((o: { id: string; object: { hash: string } }) => [o.id, o.object.hash]));
}
function folderFiles(folder: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string, stored: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(path.join(dir, entry.name), `${stored}/${entry.name}`);
      else out[`${stored}/${entry.name}`] = createHash("sha256").update(readFileSync(path.join(dir, entry.name))).digest("hex");
    }
  };
  walk(folder, path.basename(folder));
  return Object.fromEntries(Object.entries(out).sort());
}

describe("objects add --watch", () => {
  it("reflects creates, edits in place, saves by rename, deletes and moved folders; stops cleanly on SIGINT", async () => {
    const project = tempProject();
    const notes = path.join(path.dirname(project), "notes");
    mkdirSync(path.join(notes, "old"), { recursive: true });
    writeFileSync(path.join(notes, "a.md"), "# Alpha\n");
    writeFileSync(path.join(notes, "gone.txt"), "deleted while no watcher ran\n");
    await cliJson(project, ["objects", "add", notes]);
    const { id: index } = await cliJson(project, ["index", "create", "--searchable", "body", "--wait"]);
    rmSync(path.join(notes, "gone.txt"));
    writeFileSync(path.join(notes, "old", "inner.txt"), "inner text\n");

    const watcher = startWatcher(project, notes);
    const reconciled = (await watcher.until((line) => "reconciled" in line)).reconciled as { files: Record<string, number> };
    expect(reconciled.files).toMatchObject({ added: 1, unchanged: 1, deleted: 1 });

    let seen = watcher.lines.length;
    writeFileSync(path.join(notes, "created.txt"), "a new file about zebras\n");
    await watcher.until((line) => line.action === "added" && line.path === "notes/created.txt", seen);
    // the watcher indexes in its own process (the worker stays, its model loaded): the new file becomes searchable
    for (let tries = 0; ; tries++) {
      const status = await cliJson(project, ["worker", "status"]);
      const found = (await cliJson(project, ["search", index, "zebras", "--mode", "lexical"])).results.map((r: { id: string }) => r.id);
      if (status.pid === watcher.child.pid && found.includes("notes/created.txt")) break;
      if (tries > 120) throw new Error(`not indexed by the watcher: ${JSON.stringify(status)} ${JSON.stringify(found)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }

    seen = watcher.lines.length;
    writeFileSync(path.join(notes, "a.md"), "# Alpha\n\nEdited in place.\n");
    await watcher.until((line) => line.action === "replaced" && line.path === "notes/a.md", seen);
    expect((await cliJson(project, ["objects", "get", "notes/a.md"])).object.body).toBe("Alpha\n\nEdited in place.");

    seen = watcher.lines.length;
    writeFileSync(path.join(notes, ".a.md.tmp"), "# Alpha\n\nSaved by rename.\n");
    renameSync(path.join(notes, ".a.md.tmp"), path.join(notes, "a.md"));
    await watcher.until((line) => line.action === "replaced" && line.path === "notes/a.md", seen);
    expect((await cliJson(project, ["objects", "get", "notes/a.md"])).object.body).toBe("Alpha\n\nSaved by rename.");

    seen = watcher.lines.length;
    rmSync(path.join(notes, "created.txt"));
    await watcher.until((line) => line.action === "deleted" && line.path === "notes/created.txt", seen);

    seen = watcher.lines.length;
    renameSync(path.join(notes, "old"), path.join(notes, "new"));
    await watcher.until((line) => line.action === "moved" && line.path === "notes/new/inner.txt" && line.from === "notes/old/inner.txt", seen);
    expect(await projectFiles(project)).toEqual(folderFiles(notes));

    watcher.child.kill("SIGINT");
    expect(await watcher.exited).toEqual({ code: 0, signal: null });
  });

  it("a watcher killed in a burst of changes leaves a project that the next start reconciles exactly", async () => {
    const project = tempProject();
    const notes = path.join(path.dirname(project), "notes");
    mkdirSync(notes, { recursive: true });
    for (let i = 0; i < 20; i++) writeFileSync(path.join(notes, `f${i}.txt`), `file ${i}\n`);
    const first = startWatcher(project, notes);
    await first.until((line) => "reconciled" in line);
    // a burst: edits, creations and deletions, the watcher killed while it applies them
    const burst = (round: number) => {
      for (let i = 0; i < 40; i++) {
        const file = path.join(notes, `f${i}.txt`);
        if (i % 5 === 0 && round > 0) rmSync(file, { force: true });
        else writeFileSync(file, `file ${i}, round ${round}\n`);
      }
    };
    burst(0);
    await first.until((line) => line.action === "added" || line.action === "replaced");
    burst(1);
    first.child.kill("SIGKILL");
    await first.exited;
    burst(2);

    const second = startWatcher(project, notes);
    await second.until((line) => "reconciled" in line);
    expect(await projectFiles(project)).toEqual(folderFiles(notes));
    expect(Object.keys(folderFiles(notes))).toHaveLength(32);
    second.child.kill("SIGTERM");
    expect((await second.exited).code).toBe(0);
    expect(statSync(project).isDirectory()).toBe(true);
  });

  it("SIGTERM during a reconcile of many steps commits the step in progress and exits, leaving the rest to the next add", async () => {
    const project = tempProject();
    const notes = path.join(path.dirname(project), "notes");
    mkdirSync(notes, { recursive: true });
    for (let i = 0; i < 2500; i++) writeFileSync(path.join(notes, `f${i}.txt`), `file ${i}\n`);
    // each step pauses 3 s once written: SIGTERM is sent in the first step's pause
    const watcher = startWatcher(project, notes, { SEMSEARCH_FAILPOINT: "files:added:pause" });
    while ((await cliJson(project, ["objects", "list", "--limit", "1"])).objects.length === 0) expect(watcher.child.exitCode).toBeNull();
    watcher.child.kill("SIGTERM");
    expect((await watcher.exited).code).toBe(0);
    const again: { count: number; files: { unchanged: number } } = await cliJson(project, ["objects", "add", notes]);
    // the first step (and the file or so read when the signal came), not all three
    expect(again.files.unchanged).toBeGreaterThanOrEqual(1000);
    expect(again.files.unchanged).toBeLessThan(1100);
    expect(again.count).toBe(2500 - again.files.unchanged);
  });

  it("the watched folder deleted is said plainly, its objects stay, and it is read again once back", async () => {
    const project = tempProject();
    const notes = path.join(path.dirname(project), "notes");
    mkdirSync(notes, { recursive: true });
    writeFileSync(path.join(notes, "a.md"), "a\n");
    const watcher = startWatcher(project, notes);
    await watcher.until((line) => "reconciled" in line);
    rmSync(notes, { recursive: true });
    while (!watcher.stderr().includes("WATCH_STEP_FAILED")) await new Promise((resolve) => watcher.child.stderr.once("data", resolve));
    const warning = JSON.parse(watcher.stderr().split("\n")[0] as string).warnings[0].message;
    expect(warning).toBe(`${notes} cannot be read: it no longer exists; the objects read from it stay`);
    expect(Object.keys(await projectFiles(project))).toEqual(["notes/a.md"]);
    // retried every 2 s while the folder is gone, and said once
    await new Promise((resolve) => setTimeout(resolve, 4500));
    expect(watcher.stderr().split("WATCH_STEP_FAILED").length - 1).toBe(1);
    mkdirSync(notes);
    writeFileSync(path.join(notes, "b.md"), "b\n");
    await watcher.until((line) => line.action === "deleted" && line.path === "notes/a.md");
    expect(Object.keys(await projectFiles(project))).toEqual(["notes/b.md"]);
  });

  it("a watcher killed at each step of applying a change (journal, batch, stale objects, delete) is made exact by the next start", async () => {
    for (const point of ["add:journal", "add:batch", "files:added", "delete:journal"]) {
      const project = tempProject();
      const notes = path.join(path.dirname(project), "notes");
      mkdirSync(notes, { recursive: true });
      for (let i = 0; i < 5; i++) writeFileSync(path.join(notes, `f${i}.txt`), `file ${i}\n`);
      writeFileSync(path.join(notes, "rows.csv"), "id,v\nr1,1\nr2,2\n");
      await cliJson(project, ["objects", "add", notes]);
      const watcher = startWatcher(project, notes, { SEMSEARCH_FAILPOINT: point });
      await watcher.until((line) => "reconciled" in line);
      writeFileSync(path.join(notes, "f0.txt"), "edited\n");
      writeFileSync(path.join(notes, "new.txt"), "created\n");
      writeFileSync(path.join(notes, "rows.csv"), "id,v\nr1,10\n");
      rmSync(path.join(notes, "f1.txt"));
      expect((await watcher.exited).signal, point).toBe("SIGKILL");
      const restarted = startWatcher(project, notes);
      await restarted.until((line) => "reconciled" in line);
      const expected = folderFiles(notes);
      const stored = await projectFiles(project);
      expect(Object.keys(stored).sort(), point).toEqual([...Object.keys(expected).filter((file) => !file.endsWith(".csv")), "r1"].sort());
      for (const [file, hash] of Object.entries(expected)) expect(stored[file.endsWith(".csv") ? "r1" : file], `${point}: ${file}`).toBe(hash);
      restarted.child.kill("SIGINT");
      expect((await restarted.exited).code).toBe(0);
    }
  });
  it("another project made inside the watched folder is left out, said once, and what is written into it later is not looked at", async () => {
    const project = tempProject();
    const notes = path.join(path.dirname(project), "notes");
    mkdirSync(notes, { recursive: true });
    writeFileSync(path.join(notes, "a.md"), "# A\n");
    const watcher = startWatcher(project, notes);
    await watcher.until((line) => "reconciled" in line);
    // a project of its own made in it (as `--project notes/inner` makes one), with a key
    const inner = path.join(notes, "inner");
    await ok(inner, async (engine) => {
      await addObjects(engine, '{"id":"i1","title":"inner"}\n');
      await engine.createKey({ name: "k" });
    });
    await watcher.until((line) => line.action === "skipped" && line.path === "notes/inner/" && line.kind === "project");
    // written to again, then a file of the folder's: the file is added, the project still left out and said once
    await ok(inner, (engine) => addObjects(engine, '{"id":"i2","title":"inner again"}\n'));
    writeFileSync(path.join(notes, "z.md"), "# Z\n");
    await watcher.until((line) => line.action === "added" && line.path === "notes/z.md");
    expect(watcher.lines.filter((line) => String(line.path).startsWith("notes/inner"))).toEqual([
      { action: "skipped", path: "notes/inner/", objects: 0, reason: expect.stringContaining("a semsearch project's folder"), kind: "project" },
    ]);
    expect(Object.keys(await projectFiles(project)).sort()).toEqual(["notes/a.md", "notes/z.md"]);
    watcher.child.kill("SIGINT");
    expect((await watcher.exited).code).toBe(0);
  });

  it("a file deleted while a reconcile reads the folder is said once, deleted (not also skipped as no longer existing)", async () => {
    const project = tempProject();
    const notes = path.join(path.dirname(project), "notes");
    const file = (i: number) => path.join(notes, `f${String(i).padStart(4, "0")}.txt`);
    mkdirSync(notes, { recursive: true });
    for (let i = 0; i < 1200; i++) writeFileSync(file(i), `file ${i}\n`);
    await ok(project, (engine) => engine.addFiles([notes]));
    for (let i = 0; i < 1200; i++) writeFileSync(file(i), `file ${i}, edited\n`);
    // the watcher's first reconcile reads every file, in two steps; each pauses 3 s once written
    const watcher = startWatcher(project, notes, { SEMSEARCH_FAILPOINT: "files:added:pause" });
    // in the pause after the first step (1,000 files), a file not read yet is deleted
    const edited = createHash("sha256").update("file 0, edited\n").digest("hex");
    await waitFor("the first step's objects", async () => (await ok(project, (engine) => engine.getObject("notes/f0000.txt"))).object.hash === edited, { timeoutMs: 120_000, intervalMs: 200 });
    rmSync(file(1150));
    const reconciled = (await watcher.until((line) => "reconciled" in line)).reconciled as { files: Record<string, number>; skipped: unknown[] };
    expect([reconciled.files.replaced, reconciled.files.deleted, reconciled.skipped]).toEqual([1199, 1, []]);
    // then a file added: its line comes once the deletion's own event has been reconciled too, which has nothing more to say
    const seen = watcher.lines.length;
    writeFileSync(path.join(notes, "z.md"), "# Z\n");
    await watcher.until((line) => line.action === "added" && line.path === "notes/z.md", seen);
    expect(watcher.lines.slice(seen)).toEqual([{ action: "added", path: "notes/z.md", objects: 1 }]);
    expect(await ok(project, async (engine) => (await engine.listObjects(0, 2000)).length)).toBe(1200); // (1,199 files, z.md)
    watcher.child.kill("SIGINT");
    expect((await watcher.exited).code).toBe(0);
  });
});
