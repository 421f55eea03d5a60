import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createKey, KeyChecker, listKeys, revokeKey } from "../../../src/engine/keys.js";
import { Project } from "../../../src/engine/project.js";
import { tempDir } from "../../helpers/temp.js";

const now = new Date("2026-01-02T03:04:05Z");

function project(): Project {
  return new Project(path.join(tempDir(), "p"));
}

describe("API keys", () => {
  it("stores only a digest, checks the key, and lists no key", async () => {
    const p = project();
    const created = await createKey(p, { name: "ci", readOnly: true }, now);
    expect(created.key).toMatch(/^ssk_key_[0-9a-z]{12}_[A-Za-z0-9_-]{43}$/);
    const file = readFileSync(path.join(p.dir, "keys.json"), "utf8");
    expect(file).not.toContain(created.key.slice(-43));
    expect(statSync(path.join(p.dir, "keys.json")).mode & 0o777).toBe(0o600);
    expect(await listKeys(p)).toEqual([{ id: created.id, name: "ci", read_only: true, created_at: now.toISOString() }]);
    const checker = await KeyChecker.open(p);
    expect(checker.check(created.key)).toEqual({ keyId: created.id, readOnly: true });
  });

  it.each([
    ["another secret", (key: string) => key.slice(0, -1) + (key.endsWith("A") ? "B" : "A")],
    ["an unknown id", (key: string) => key.replace(/key_[0-9a-z]{12}/, "key_000000000000")],
    ["a malformed key", (key: string) => key.slice(1)],
    ["an empty key", () => ""],
  ])("refuses %s", async (_what, change) => {
    const p = project();
    const { key } = await createKey(p, {}, now);
    expect((await KeyChecker.open(p)).check(change(key))).toBeNull();
  });

  it("follows the file: a key revoked or created elsewhere counts at the next check", async () => {
    const p = project();
    const checker = await KeyChecker.open(p);
    expect(checker.hasKeys()).toBe(false);
    const first = await createKey(p, { name: "a" }, now);
    expect(checker.hasKeys()).toBe(true);
    expect(checker.check(first.key)?.readOnly).toBe(false);
    const revoked = await revokeKey(p, "a", now);
    expect(revoked.revoked_at).toBe(now.toISOString());
    expect(checker.check(first.key)).toBeNull();
    expect(checker.hasKeys()).toBe(false);
  });

  it("revokes by id, refuses an unknown or ambiguous name", async () => {
    const p = project();
    const one = await createKey(p, { name: "twin" }, now);
    await createKey(p, { name: "twin" }, now);
    await expect(revokeKey(p, "twin", now)).rejects.toMatchObject({ code: "AMBIGUOUS_KEY_NAME" });
    await expect(revokeKey(p, "nobody", now)).rejects.toMatchObject({ code: "KEY_NOT_FOUND", status: 404 });
    expect((await revokeKey(p, one.id, now)).id).toBe(one.id);
  });

  it.each([[""], [" "], ["a\nb"], ["x".repeat(201)]])("refuses the name %j", async (name) => {
    await expect(createKey(project(), { name }, now)).rejects.toMatchObject({ code: "INVALID_KEY_NAME", status: 422 });
  });

  it("reports a damaged keys file instead of reading it as no keys", async () => {
    const p = project();
    await createKey(p, {}, now);
    writeFileSync(path.join(p.dir, "keys.json"), '{"version":1,"secret":"short","keys":[]}');
    await expect(KeyChecker.open(p)).rejects.toThrow(/damaged/);
    await expect(listKeys(p)).rejects.toThrow(expect.objectContaining({ code: "CORRUPT_PROJECT" }));
  });
});

describe("a keys file that is not a regular file", () => {
  it.each([["a FIFO"], ["a directory"]])("is reported as damaged, without blocking: %s", async (what) => {
    const p = project();
    await createKey(p, {}, now);
    const file = path.join(p.dir, "keys.json");
    rmSync(file);
    if (what === "a FIFO") execFileSync("mkfifo", [file]);
    else mkdirSync(file);
    await expect(KeyChecker.open(p)).rejects.toThrow(/not a regular file/);
  });

  it("does not quote a file that is not JSON", async () => {
    const p = project();
    await p.init();
    writeFileSync(path.join(p.dir, "keys.json"), "root:x:0:0:root:/root:/bin/bash");
    await expect(listKeys(p)).rejects.toThrow(expect.objectContaining({ message: expect.not.stringContaining("root:x") }));
  });
});
