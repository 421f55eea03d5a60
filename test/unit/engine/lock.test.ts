import { spawn, spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { acquireLock, lockHolder, tryLock } from "../../../src/engine/lock.js";
import { currentOwner, processAlive, processStart } from "../../../src/engine/owner.js";
import { ROOT } from "../../helpers/cli.js";
import { tempDir } from "../../helpers/temp.js";
import { waitFor, within } from "../../helpers/wait.js";

const dir = tempDir("semsearch-lock-");

function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(child.stdout);
}

describe("file locks", () => {
  it("is exclusive while held and free after release", () => {
    const file = path.join(dir, "a.lock");
    const release = tryLock(file);
    expect(release).not.toBeNull();
    expect(lockHolder(file)?.pid).toBe(process.pid);
    expect(tryLock(file)).toBeNull();
    release?.();
    expect(existsSync(file)).toBe(false);
    expect(lockHolder(file)).toBeNull();
  });

  it("records who holds it: pid, start time and command", () => {
    const file = path.join(dir, "info.lock");
    const release = tryLock(file);
    const written = JSON.parse(readFileSync(file, "utf8"));
    expect(written).toMatchObject({ pid: process.pid, command: expect.stringMatching(/^semsearch/) });
    if (process.platform === "linux") expect(written.start).toBe(currentOwner().start);
    release?.();
  });

  it("takes over a lock whose owner died (and the bare-pid form of older versions)", () => {
    for (const content of [JSON.stringify({ pid: deadPid() }), `${deadPid()}\n`]) {
      const file = path.join(dir, "b.lock");
      writeFileSync(file, content);
      expect(lockHolder(file)).toBeNull();
      const release = tryLock(file);
      expect(release).not.toBeNull();
      expect(lockHolder(file)?.pid).toBe(process.pid);
      release?.();
    }
  });

  it.skipIf(process.platform !== "linux")("takes over a lock whose pid now belongs to another live process (pid reuse)", () => {
    const file = path.join(dir, "reuse.lock");
    // pid 1 is alive, but it did not start at this time: the lock's owner is gone
    writeFileSync(file, JSON.stringify({ pid: 1, start: `${processStart(1)?.split(":")[0]}:1` }));
    expect(processAlive(1)).toBe(true);
    expect(lockHolder(file)).toBeNull();
    const release = tryLock(file);
    expect(release).not.toBeNull();
    release?.();
    // and the same pid with its real start time is a live holder
    writeFileSync(file, JSON.stringify({ pid: 1, start: processStart(1) }));
    expect(lockHolder(file)?.pid).toBe(1);
    expect(tryLock(file)).toBeNull();
  });

  it.skipIf(process.platform !== "linux")("a lock without a start time (older versions) is stale when its pid belongs to a process started after the lock was written", () => {
    const file = path.join(dir, "legacy.lock");
    writeFileSync(file, `${process.pid}\n`);
    expect(lockHolder(file)?.pid).toBe(process.pid); // written now: this process may well have written it
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(file, hourAgo, hourAgo);
    expect(lockHolder(file)).toBeNull(); // this process did not exist an hour ago
    writeFileSync(file, "1\n"); // pid 1 is alive and older than the lock, but it is not Node.js: not a semsearch process
    expect(lockHolder(file)).toBeNull();
    const release = tryLock(file);
    expect(release).not.toBeNull();
    release?.();
  });

  it("a symbolic link (even a dangling one) where a lock belongs is stale; a directory there is an EnvironmentError", () => {
    const file = path.join(dir, "link.lock");
    symlinkSync(path.join(dir, "nowhere"), file);
    expect(lockHolder(file)).toBeNull();
    const release = tryLock(file);
    expect(release).not.toBeNull();
    expect(lstatSync(file).isFile()).toBe(true);
    release?.();
    const folder = path.join(dir, "folder.lock");
    mkdirSync(folder);
    expect(() => tryLock(folder)).toThrow(expect.objectContaining({ code: "EISDIR", exitCode: 6 }));
  });

  it("an empty or unreadable lock file is stale once it is older than a few seconds", () => {
    const file = path.join(dir, "empty.lock");
    writeFileSync(file, "");
    expect(tryLock(file)).toBeNull(); // may be one being created right now
    const old = new Date(Date.now() - 60_000);
    utimesSync(file, old, old);
    const release = tryLock(file);
    expect(release).not.toBeNull();
    release?.();
  });

  it("acquireLock waits for a live holder and times out with a ConflictError naming it", async () => {
    const file = path.join(dir, "c.lock");
    const release = tryLock(file);
    await expect(acquireLock(file, 50)).rejects.toMatchObject({ code: "LOCKED", exitCode: 5, message: expect.stringContaining(`process ${process.pid}`) });
    release?.();
    const again = await acquireLock(file, 50);
    again();
  });

  it("of many processes racing for one stale lock, exactly one gets it", async () => {
    const file = path.join(dir, "race.lock");
    writeFileSync(file, JSON.stringify({ pid: deadPid() }));
    // Each process says it is ready, tries the lock when told to go, says whether it won, and the
    // winner holds the lock until every process has answered (its input ends): no step waits a set time.
    const script = `
      const { tryLock } = await import(${JSON.stringify(path.join(ROOT, "dist/engine/lock.js"))});
      const input = (await import("node:readline")).createInterface({ input: process.stdin })[Symbol.asyncIterator]();
      process.stdout.write("ready\\n");
      await input.next();
      const release = tryLock(${JSON.stringify(file)});
      process.stdout.write(release ? "won\\n" : "lost\\n");
      await input.next();
      release?.();`;
    const children = Array.from({ length: 8 }, () => spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["pipe", "pipe", "inherit"] }));
    const outputs = children.map((child) => {
      let out = "";
      child.stdout.on("data", (chunk) => (out += chunk));
      return () => out;
    });
    const closed = Promise.all(children.map((child) => new Promise((resolve) => child.on("close", resolve))));
    const said = (word: RegExp) => outputs.every((output) => word.test(output()));
    await waitFor("every process to be ready", () => said(/^ready\n/));
    for (const child of children) child.stdin.write("go\n");
    await waitFor("every process to try the lock", () => said(/\n(won|lost)\n/));
    for (const child of children) child.stdin.end();
    await within("the processes to exit", closed);
    const results = outputs.map((output) => output().split("\n")[1]);
    expect(results.filter((result) => result === "won")).toHaveLength(1);
    expect(results.filter((result) => result === "lost")).toHaveLength(7);
  });
});
