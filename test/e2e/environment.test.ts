/**
 * Faults of the environment through the real CLI: a project path that is a file, a read-only file
 * system, a full disk (small tmpfs mounts; skipped where this process cannot mount), a planted
 * symbolic link, a closed output pipe, and finding the project from a subdirectory.
 */
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, cliJson, runCli, SAMPLE, tempProject, type CliResult } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

const mounts: string[] = [];
afterAll(() => {
  for (const dir of mounts) spawnSync("umount", ["-l", dir]);
});

/** A small tmpfs at a new directory, or null where this process may not mount (not root). */
function tmpfs(sizeMb: number): string | null {
  const dir = tempDir("semsearch-mnt-");
  const result = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${sizeMb}m`, "tmpfs", dir]);
  if (result.status !== 0) return null;
  mounts.push(dir);
  return dir;
}

function remount(dir: string, mode: "ro" | "rw"): void {
  const result = spawnSync("mount", ["-o", `remount,${mode}`, dir]);
  expect(result.status, String(result.stderr)).toBe(0);
}

const canMount = (() => {
  const dir = tmpfs(1);
  return dir !== null;
})();

/** Waits until the project's background worker has exited (a busy mount cannot be remounted read-only). */
async function workerGone(project: string): Promise<void> {
  for (let i = 0; i < 300 && (await cliJson(project, ["worker", "status"])).running; i++) await new Promise((resolve) => setTimeout(resolve, 100));
  // The worker releases its lock before it exits; until then it holds worker.log open, and a busy
  // file system cannot be remounted read-only. Its work is done (the lock is free): end it rather
  // than wait out its exit, which took over 10 s on a loaded machine, then wait for the process.
  spawnSync("pkill", ["-TERM", "-f", `worker-main.js ${project}`]);
  for (let i = 0; i < 600 && spawnSync("pgrep", ["-f", `worker-main.js ${project}`]).status === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
}

function errorOf(result: CliResult): { code: string; message: string; hint?: string } {
  expect(result.stdout).toBe("");
  return JSON.parse(result.stderr.trim().split("\n").at(-1) as string).errors[0];
}

const twenty = Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: `d${i}`, title: `Document ${i}`, body: `A line about rivers and hills, number ${i}.` })).join("\n");

describe("environment faults are exit 6 with a message, never a crash", () => {
  it("a project path that is a file, or lies below a file", async () => {
    const file = path.join(tempDir(), "not-a-dir");
    writeFileSync(file, "x");
    for (const project of [file, path.join(file, "below")]) {
      for (const args of [["index", "list"], ["objects", "add", "-"], ["search", "idx_x", "q"]]) {
        const result = await runCli(["--project", project, "--json", ...args], { input: '{"id":"a"}' });
        expect(result.exitCode, result.stderr).toBe(6);
        expect(errorOf(result).message).toMatch(/not a directory/);
      }
    }
    const human = await runCli(["--project", file, "index", "list"]);
    expect(human.stderr).not.toMatch(/\n\s+at |This is a bug/);
  });

  it.skipIf(!canMount)("a read-only project: reading works, writing exits 6 and changes nothing, and works again once writable", async () => {
    const mount = tmpfs(200) as string;
    const project = path.join(mount, "p");
    await cliJson(project, ["objects", "add", "-"], { input: twenty });
    const { id } = await cliJson(project, ["index", "create", "--searchable", "title,body", "--wait"]);
    await workerGone(project);
    remount(mount, "ro");
    const search = await cliJson(project, ["search", id, "rivers and hills"]);
    expect(search.results.length).toBeGreaterThan(0);
    expect((await cliJson(project, ["objects", "get", "d3"])).id).toBe("d3");
    for (const args of [["objects", "add", "-"], ["objects", "delete", "d1"], ["index", "create"], ["index", "delete", id]]) {
      const result = await runCli(["--project", project, "--json", ...args], { input: '{"id":"new"}' });
      expect(result.exitCode, `${args.join(" ")}: ${result.stderr}`).toBe(6);
      expect(errorOf(result)).toMatchObject({ code: "EROFS", message: expect.stringContaining("read-only"), hint: expect.any(String) });
    }
    remount(mount, "rw");
    expect(readdirSync(project).filter((name) => name.endsWith(".lock") || name.endsWith(".journal"))).toEqual([]);
    await cliJson(project, ["objects", "add", "-"], { input: '{"id":"new","title":"rivers"}' });
    expect((await cliJson(project, ["index", "status", id, "--wait"])).status.READY).toBe(21);
  });

  it.skipIf(!canMount)("a read-only project that never read standard input: objects add - says read-only, not a missing folder", async () => {
    // Node's recursive mkdir reports ENOENT when it cannot make the last folder (it stats it after
    // EROFS or EACCES), which read as "a part of its path does not exist (a symbolic link…?)".
    const mount = tmpfs(50) as string;
    const project = path.join(mount, "p");
    const file = path.join(tempDir(), "twenty.jsonl");
    writeFileSync(file, twenty);
    await cliJson(project, ["objects", "add", file]);
    remount(mount, "ro");
    const result = await runCli(["--project", project, "--json", "objects", "add", "-"], { input: '{"id":"new"}' });
    expect(result.exitCode, result.stderr).toBe(6);
    expect(errorOf(result)).toMatchObject({ code: "EROFS", message: expect.stringContaining("read-only") });
    remount(mount, "rw");
  });

  it.skipIf(!canMount)("a full disk: writes exit 6 leaving no lock or journal behind, and work at once when space is freed", async () => {
    const mount = tmpfs(120) as string;
    const project = path.join(mount, "p");
    await cliJson(project, ["objects", "add", "-"], { input: twenty });
    const { id } = await cliJson(project, ["index", "create", "--searchable", "title,body", "--wait"]);
    const filler = path.join(mount, "filler");
    spawnSync("dd", ["if=/dev/zero", `of=${filler}`, "bs=1M", "count=1000"]);
    const big = Array.from({ length: 2000 }, (_, i) => JSON.stringify({ id: `f${i}`, body: "x".repeat(1000) })).join("\n");
    for (const args of [["objects", "add", "-"], ["objects", "delete", "d2"], ["index", "create"]]) {
      const result = await runCli(["--project", project, "--json", ...args], { input: big });
      expect(result.exitCode, `${args.join(" ")}: ${result.stderr}`).toBe(6);
      expect(errorOf(result).message).toMatch(/disk is full|ENOSPC/);
    }
    expect(readdirSync(project).filter((name) => /\.(lock|journal|tmp)$|^tmp$/.test(name) && !(name === "tmp" && readdirSync(path.join(project, "tmp")).length === 0))).toEqual([]);
    spawnSync("rm", ["-f", filler]);
    await cliJson(project, ["objects", "add", "-"], { input: '{"id":"after","title":"rivers"}' });
    expect((await cliJson(project, ["index", "status", id, "--wait"])).status).toEqual({ UPLOADED: 0, PROCESSING: 0, READY: 21, ERROR: 0 });
    expect(await cliJson(project, ["objects", "list", "--limit", "100"]).then((r) => r.objects.length)).toBe(21);
  });

  it("a project path that is a dangling symbolic link, a data directory that is a file, a path with a newline", async () => {
    const base = tempDir();
    symlinkSync(path.join(base, "nowhere"), path.join(base, "link"));
    const dangling = await runCli(["--project", path.join(base, "link"), "--json", "objects", "add", "-"], { input: '{"id":"a"}' });
    expect(dangling.exitCode, dangling.stderr).toBe(6);
    expect(errorOf(dangling).message).toMatch(/does not exist/);
    const project = tempProject();
    await cliJson(project, ["objects", "add", "-"], { input: '{"id":"a"}' });
    rmSync(path.join(project, "data"), { recursive: true });
    writeFileSync(path.join(project, "data"), "x");
    for (const args of [["objects", "list"], ["objects", "get", "a"], ["objects", "add", "-"]]) {
      const result = await runCli(["--project", project, "--json", ...args], { input: '{"id":"b"}' });
      expect(result.exitCode, `${args.join(" ")}: ${result.stderr}`).toBe(6);
      expect(errorOf(result).message).toContain(`${path.join(project, "data")} in the project is not a directory`);
    }
    const newline = await runCli(["--project", path.join(base, "new\nline"), "--json", "objects", "add", "-"], { input: '{"id":"a"}' });
    expect(newline.exitCode).toBe(2);
    expect(errorOf(newline).code).toBe("INVALID_PROJECT");
  });

  it("output that cannot be written (a full device) is exit 6 with a message", async () => {
    const project = tempProject();
    await cliJson(project, ["objects", "add", SAMPLE]);
    for (const args of ["objects list", "--json objects list"]) {
      const result = spawnSync("bash", ["-c", `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} --project ${JSON.stringify(project)} ${args} > /dev/full`], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
      expect(result.status, result.stderr).toBe(6);
      expect(result.stderr).toMatch(/disk is full/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it("a symbolic link planted at worker.log is not followed", async () => {
    const project = tempProject();
    await cliJson(project, ["objects", "add", "-"], { input: twenty });
    const outside = path.join(tempDir(), "outside.txt");
    writeFileSync(outside, "untouched\n");
    symlinkSync(outside, path.join(project, "worker.log"));
    const { id } = await cliJson(project, ["index", "create", "--wait"]);
    expect(readFileSync(outside, "utf8")).toBe("untouched\n");
    expect(lstatSync(path.join(project, "worker.log")).isFile()).toBe(true);
    expect((await cliJson(project, ["index", "status", id])).status.READY).toBe(20);
  });
});

describe("pipes and places", () => {
  it("a reader that closes the pipe ends the command quietly with success", async () => {
    const project = tempProject();
    await cliJson(project, ["objects", "add", SAMPLE]);
    const { id } = await cliJson(project, ["index", "create", "--wait"]);
    for (const args of [
      ["search", id, "energy", "--all", "--jsonl", "--limit", "1"],
      ["search", id, "energy", "--all", "--limit", "1"],
      ["objects", "list"],
    ]) {
      const script = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} --project ${JSON.stringify(project)} ${args.map((a) => JSON.stringify(a)).join(" ")} | head -c 10 > /dev/null; echo "\${PIPESTATUS[0]}"`;
      const result = spawnSync("bash", ["-c", script], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
      expect(result.stdout.trim(), result.stderr).toBe("0");
      expect(result.stderr).toBe("");
    }
  });

  it("objects add reads a pipe given as a file (process substitution, /dev/stdin), once", async () => {
    const project = tempProject();
    const result = spawnSync("bash", ["-c", `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} --project ${JSON.stringify(project)} --json objects add <(cat ${JSON.stringify(SAMPLE)}) && cat ${JSON.stringify(SAMPLE)} | ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} --project ${JSON.stringify(project)} --json objects add /dev/stdin`], { encoding: "utf8" });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout.trim().split("\n").map((line) => JSON.parse(line).count)).toEqual([40, 40]);
    expect((await cliJson(project, ["objects", "list"])).objects).toHaveLength(40);
  });

  it("without --project, the nearest .semsearch in the working directory or above it is used", async () => {
    const top = tempDir();
    const deep = path.join(top, "a", "b");
    mkdirSync(deep, { recursive: true });
    await cliJson(path.join(top, ".semsearch"), ["objects", "add", "-"], { input: '{"id":"found"}' });
    const result = await runCli(["--json", "objects", "list"], { cwd: deep });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).objects.map((o: { id: string }) => o.id)).toEqual(["found"]);
    expect(existsSync(path.join(deep, ".semsearch"))).toBe(false);
  });
});
