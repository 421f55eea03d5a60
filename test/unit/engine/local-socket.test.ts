import { chmodSync, mkdirSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { localSocketPath, prepareSocketDir, realProjectPath, socketDirIsPrivate } from "../../../src/engine/local-socket.js";
import { tempDir } from "../../helpers/temp.js";

describe("the local socket's place", () => {
  const runtime = process.env.XDG_RUNTIME_DIR;
  afterEach(() => {
    if (runtime === undefined) delete process.env.XDG_RUNTIME_DIR;
    else process.env.XDG_RUNTIME_DIR = runtime;
  });

  it("is the same for every spelling of one project, and another for another project", () => {
    const dir = tempDir();
    const project = path.join(dir, "project");
    mkdirSync(project);
    symlinkSync(project, path.join(dir, "link"));
    const socket = localSocketPath(project);
    expect(localSocketPath(path.join(dir, "link"))).toBe(socket);
    expect(localSocketPath(`${project}/./`)).toBe(socket);
    expect(localSocketPath(path.relative(process.cwd(), project))).toBe(socket);
    expect(localSocketPath(path.join(dir, "other"))).not.toBe(socket);
  });

  it("is in /tmp when the usual directory would make it too long for a socket (a long TMPDIR)", () => {
    process.env.XDG_RUNTIME_DIR = path.join(tempDir(), "x".repeat(90));
    const socket = localSocketPath("/some/project");
    expect(Buffer.byteLength(socket)).toBeLessThanOrEqual(100);
    expect(socket.startsWith(`/tmp/semsearch-`)).toBe(true);
  });

  it("is not made where its parent is missing or not a directory: an error, not a loop", () => {
    process.env.XDG_RUNTIME_DIR = path.join(tempDir(), "missing");
    expect(() => prepareSocketDir(localSocketPath("/some/project"))).toThrow(expect.objectContaining({ code: "ENOENT" }));
    process.env.XDG_RUNTIME_DIR = "/proc/1";
    expect(() => prepareSocketDir(localSocketPath("/some/project"))).toThrow();
  });

  it("is short enough for any platform's socket path limit, however deep the project", () => {
    const deep = path.join(tempDir(), "a".repeat(200), "b".repeat(200));
    expect(Buffer.byteLength(localSocketPath(deep))).toBeLessThan(104);
  });

  it("is in a directory only this user may use: one another user could have prepared is refused", () => {
    process.env.XDG_RUNTIME_DIR = tempDir();
    const socket = localSocketPath("/some/project");
    expect(socketDirIsPrivate(socket)).toBe(false); // not there yet
    expect(prepareSocketDir(socket)).toBe(true);
    expect(socketDirIsPrivate(socket)).toBe(true);
    chmodSync(path.dirname(socket), 0o755);
    expect(socketDirIsPrivate(socket)).toBe(false);
    expect(prepareSocketDir(socket)).toBe(false);
    process.env.XDG_RUNTIME_DIR = "relative/dir"; // not absolute: ignored
    expect(localSocketPath("/some/project")).not.toContain("relative");
  });
});

describe("a project's real path", () => {
  it("resolves links above a project that does not exist yet, so a server started before it finds its clients", () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, "real"));
    symlinkSync(path.join(dir, "real"), path.join(dir, "link"));
    const before = localSocketPath(path.join(dir, "link", "new", "project"));
    mkdirSync(path.join(dir, "real", "new", "project"), { recursive: true });
    expect(localSocketPath(path.join(dir, "link", "new", "project"))).toBe(before);
    expect(realProjectPath(path.join(dir, "link", "new", "x"))).toBe(path.join(realProjectPath(dir), "real", "new", "x"));
  });
});
