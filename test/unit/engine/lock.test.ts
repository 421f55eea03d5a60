import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { acquireLock, lockOwner, processAlive, tryLock } from "../../../src/engine/lock.js";

const dir = mkdtempSync(path.join(tmpdir(), "semsearch-lock-"));

function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(child.stdout);
}

describe("file locks", () => {
  it("is exclusive while held and free after release", () => {
    const file = path.join(dir, "a.lock");
    const release = tryLock(file);
    expect(release).not.toBeNull();
    expect(lockOwner(file)).toBe(process.pid);
    expect(tryLock(file)).toBeNull();
    release?.();
    expect(existsSync(file)).toBe(false);
  });

  it("takes over a lock whose owner died", () => {
    const file = path.join(dir, "b.lock");
    const pid = deadPid();
    expect(processAlive(pid)).toBe(false);
    writeFileSync(file, `${pid}\n`);
    const release = tryLock(file);
    expect(release).not.toBeNull();
    expect(lockOwner(file)).toBe(process.pid);
    release?.();
  });

  it("acquireLock waits for a live holder and times out with a ConflictError", async () => {
    const file = path.join(dir, "c.lock");
    const release = tryLock(file);
    await expect(acquireLock(file, 50)).rejects.toMatchObject({ code: "LOCKED", exitCode: 5 });
    release?.();
    const again = await acquireLock(file, 50);
    again();
  });
});
