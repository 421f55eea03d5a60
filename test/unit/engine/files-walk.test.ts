/** The folder walk, file kinds and stored-path matching of files as objects (issue 29). */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fileKind, readsAsDocument } from "../../../src/engine/files/kinds.js";
import { inScope, pathsNamed } from "../../../src/engine/files/stored-files.js";
import { fileBytes } from "../../../src/engine/files/file-object.js";
import { storedPath, walk, type FoundFile } from "../../../src/engine/files/walk.js";

function tree(files: Record<string, string>): string {
  const root = path.join(mkdtempSync(path.join(tmpdir(), "walk-")), "docs");
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), content);
  }
  return root;
}

describe("fileKind", () => {
  it("reads kinds by extension, case ignored, and --ext extensions as text", () => {
    expect([fileKind("a/B.MD", []), fileKind("x.htm", []), fileKind("x.ndjson", []), fileKind("x.JPEG", []), fileKind("x.log", []), fileKind("Makefile", [])]).toEqual(["markdown", "html", "jsonl", "image", null, null]);
    expect([fileKind("x.log", ["log"]), fileKind("x.rst", [".RST"])]).toEqual(["text", "text"]);
    expect([fileKind("x.constructor", []), fileKind("x.__proto__", [])]).toEqual([null, null]);
    expect([readsAsDocument("a.md", []), readsAsDocument("a.json", []), readsAsDocument("a.csv", []), readsAsDocument("a.pdf", [])]).toEqual([true, false, false, true]);
  });
});

describe("walk", () => {
  it("stores paths under the folder's name, sorted, leaving out ignored, hidden and node_modules files", async () => {
    const root = tree({
      "b.md": "b",
      "a/z.txt": "z",
      "a/keep.log": "log",
      "a/.gitignore": "*.log\n!keep.log\n",
      ".semsearchignore": "secret/\n",
      "secret/x.md": "x",
      ".hidden.md": "h",
      "node_modules/m/readme.md": "m",
      "c.bin": "\u0000\u0001",
    });
    const result = await walk([root], { maxFileSize: 1000 });
    expect(result.files.map((file) => [file.path, file.kind])).toEqual([
      ["docs/a/z.txt", "text"],
      ["docs/b.md", "markdown"],
    ]);
    expect(result.files[0]?.base).toBe(path.dirname(root));
    expect(result.skipped).toEqual([
      { path: "docs/a/keep.log", reason: ".log is not a format semsearch reads (to read it as plain text: --ext log)", kind: "format" },
      { path: "docs/c.bin", reason: "binary, of a format semsearch does not read (.bin)", kind: "format" },
    ]);
    expect(result.scopes).toEqual(["docs/"]);
    expect(result.ignored).toBe(4); // .gitignore, .semsearchignore, .hidden.md, secret/ (node_modules is never entered)
  });

  it("applies --glob and --exclude to the stored paths, and --ext", async () => {
    const root = tree({ "a.md": "a", "sub/b.md": "b", "sub/c.txt": "c", "drafts/d.md": "d", "e.log": "e" });
    const only = await walk([root], { maxFileSize: 1000, glob: ["**/*.md"], exclude: ["docs/drafts"] });
    expect(only.files.map((file) => file.path)).toEqual(["docs/a.md", "docs/sub/b.md"]);
    const logs = await walk([root], { maxFileSize: 1000, textExtensions: ["log"], glob: ["docs/*"] });
    expect(logs.files.map((file) => file.path)).toEqual(["docs/a.md", "docs/e.log"]);
  });

  it("skips files over the size limit and broken links with reasons; does not follow links to folders", async () => {
    const root = tree({ "big.txt": "x".repeat(2000), "small.txt": "x", "real/in.md": "i" });
    symlinkSync(path.join(root, "missing.md"), path.join(root, "dangling.md"));
    symlinkSync(path.join(root, "real"), path.join(root, "loop"));
    symlinkSync(path.join(root, "small.txt"), path.join(root, "link.txt"));
    const result = await walk([root], { maxFileSize: 1000 });
    expect(result.files.map((file) => file.path)).toEqual(["docs/link.txt", "docs/real/in.md", "docs/small.txt"]);
    expect(result.skipped.map((file) => file.path)).toEqual(["docs/big.txt", "docs/dangling.md"]);
    expect(result.skipped[0]?.reason).toBe("2.0 KiB is over the 1000 bytes limit (--max-file-size)");
  });

  it("skips pipes, links to pipes and a pipe named directly, and a pipe put in a file's place after the walk, without waiting on them", async () => {
    const root = tree({ "a.md": "a", "late.md": "l" });
    execFileSync("mkfifo", [path.join(root, "pipe.md")]);
    symlinkSync(path.join(root, "pipe.md"), path.join(root, "to-pipe.md"));
    const result = await walk([root, path.join(root, "pipe.md")], { maxFileSize: 1000 });
    expect(result.files.map((file) => file.path)).toEqual(["docs/a.md", "docs/late.md"]);
    expect(result.skipped).toEqual(["docs/pipe.md", "docs/to-pipe.md", "docs/pipe.md"].map((file) => ({ path: file, reason: "not a regular file (a pipe, socket or device)", kind: "unreadable" })));
    const late = result.files[1] as FoundFile;
    rmSync(late.file);
    execFileSync("mkfifo", [late.file]);
    await expect(fileBytes(late)).rejects.toThrow("not a regular file");
  });

  it("skips a file or folder whose name is not UTF-8, saying so", async () => {
    const root = tree({ "a.md": "a" });
    const rootBytes = Buffer.from(root);
    writeFileSync(Buffer.concat([rootBytes, Buffer.from("/bad\xff.md", "latin1")]), "b");
    mkdirSync(Buffer.concat([rootBytes, Buffer.from("/dir\xfe", "latin1")]));
    writeFileSync(path.join(root, "ok\uFFFD.md"), "c"); // (a real U+FFFD is a name like any other)
    const result = await walk([root], { maxFileSize: 1000 });
    expect(result.files.map((file) => file.path)).toEqual(["docs/a.md", "docs/ok\uFFFD.md"]);
    const reason = "its name is not valid UTF-8 (rename it to read it)";
    expect(result.skipped).toEqual([
      { path: "docs/bad\uFFFD.md", reason, kind: "unreadable" },
      { path: "docs/dir\uFFFD/", reason, kind: "unreadable" },
    ]);
  });

  it("refuses two folders or files of one name from different places, which would be stored under one path", async () => {
    const a = tree({ "x.md": "a" });
    const b = tree({ "x.md": "b", "y.md": "y" });
    await expect(walk([a, b], { maxFileSize: 1000 })).rejects.toThrow(/would both be stored as "docs"/);
    await expect(walk([path.join(a, "x.md"), path.join(b, "x.md")], { maxFileSize: 1000 })).rejects.toThrow(/would both be stored as "docs\/x.md"/);
    expect((await walk([a, `${a}/`, path.join(a, "x.md")], { maxFileSize: 1000 })).files.map((file) => file.path)).toEqual(["docs/x.md"]);
  });

  it("leaves out the project's folder also when the folder or the project is reached through a link", async () => {
    const root = tree({ "a.md": "a", "p/catalog.json": '{"x":1}', "p/data/d.txt": "d" });
    const link = path.join(path.dirname(root), "link");
    symlinkSync(path.dirname(root), link);
    const paths = async (target: string, project: string) => (await walk([target], { maxFileSize: 1000, skipDirs: [project] })).files.map((file) => file.path);
    expect(await paths(root, path.join(link, "docs", "p"))).toEqual(["docs/a.md"]);
    expect(await paths(path.join(link, "docs"), path.join(root, "p"))).toEqual(["docs/a.md"]);
  });

  it("a file named directly is stored as in its folder; the same file twice is walked once", async () => {
    const root = tree({ "a.md": "a" });
    expect(storedPath(path.join(root, "a.md"), false)).toEqual({ base: path.dirname(root), path: "docs/a.md" });
    expect(storedPath(root, true)).toEqual({ base: path.dirname(root), path: "docs" });
    expect(storedPath("/", true)).toEqual({ base: "/", path: "" });
    const result = await walk([path.join(root, "a.md"), root, path.join(root, "a.md")], { maxFileSize: 1000 });
    expect(result.files.map((file) => file.path)).toEqual(["docs/a.md"]);
    expect(result.scopes).toEqual(["docs/a.md", "docs/", "docs/a.md"]);
  });
});

describe("walk of named paths (--watch)", () => {
  it("looks at each path as the full walk would: a file, a folder whole, nothing for one gone or left out", async () => {
    const root = tree({ "a.md": "a", "sub/b.md": "b", "sub/c.md": "c", "sub/.gitignore": "c.md\n", ".hid/d.md": "d", "node_modules/e.md": "e", "x/y/z.txt": "z" });
    const only = new Set(["docs/a.md", "docs/sub/c.md", "docs/sub", "docs/gone.md", "docs/.hid/d.md", "docs/node_modules/e.md", "docs/x/y/z.txt", "other/a.md", "docs/../etc/passwd"]);
    const result = await walk([root], { maxFileSize: 1000, only });
    expect(result.files.map((file) => file.path)).toEqual(["docs/a.md", "docs/sub/b.md", "docs/x/y/z.txt"]);
    expect(result.scopes).toEqual(["docs/a.md", "docs/a.md/", "docs/sub/c.md", "docs/sub/c.md/", "docs/sub", "docs/sub/", "docs/gone.md", "docs/gone.md/", "docs/.hid/d.md", "docs/.hid/d.md/", "docs/node_modules/e.md", "docs/node_modules/e.md/", "docs/x/y/z.txt", "docs/x/y/z.txt/"]);
    const full = await walk([root], { maxFileSize: 1000 });
    expect(full.files.map((file) => file.path)).toEqual(["docs/a.md", "docs/sub/b.md", "docs/x/y/z.txt"]);
  });
});

describe("walk: other semsearch projects' folders (issue 40)", () => {
  const CATALOG = '{"version":1,"indexes":[]}';
  const KEYS = '{"version":1,"secret":"0123456789abcdef0123456789abcdef","keys":[]}';
  const reason = (mark: string) => `a semsearch project's folder (it holds ${mark}): its files are the project's data, not documents (name a folder inside it to add that folder)`;

  it("leaves out a folder holding a semsearch catalog, keys file or object table, whatever its name, and reads look-alikes", async () => {
    const root = tree({
      "a.md": "a",
      "old/catalog.json": CATALOG,
      "old/progress/p.json": "{}",
      "keysonly/keys.json": KEYS,
      "damaged/seq": "3",
      "damaged/progress/x.json": "{}",
      "damaged/data/objects.lance/_versions/1.manifest": "m",
      // a user's folders: a product catalog, a data folder, a LanceDB table alone
      "shop/catalog.json": '{"version":2,"products":[]}',
      "shop/data/items.txt": "i",
      "lance/data/objects.lance/x.txt": "x",
      "notes/keys.json": '{"keys":["a"]}',
      "notes/progress/week.md": "w",
    });
    const result = await walk([root], { maxFileSize: 1000 });
    expect(result.files.map((file) => file.path)).toEqual(["docs/a.md", "docs/lance/data/objects.lance/x.txt", "docs/notes/keys.json", "docs/notes/progress/week.md", "docs/shop/catalog.json", "docs/shop/data/items.txt"]);
    expect(result.skipped).toEqual([
      { path: "docs/damaged/", reason: reason("data/objects.lance"), kind: "project" },
      { path: "docs/keysonly/", reason: reason("keys.json"), kind: "project" },
      { path: "docs/old/", reason: reason("catalog.json"), kind: "project" },
    ]);
  });

  it("leaves one out of a walk of named paths (--watch) too, saying which folders it found", async () => {
    const root = tree({ "a.md": "a", "p/catalog.json": CATALOG, "p/keys.json": KEYS, "p/docs/b.md": "b" });
    const found: string[] = [];
    const result = await walk([root], { maxFileSize: 1000, only: new Set(["docs/a.md", "docs/p/keys.json", "docs/p/docs/b.md", "docs/p"]), onProjectFolder: (dir) => found.push(dir) });
    expect(result.files.map((file) => file.path)).toEqual(["docs/a.md"]);
    expect(result.skipped.map((file) => [file.path, file.kind])).toEqual([["docs/p/", "project"], ["docs/p/", "project"], ["docs/p/", "project"]]);
    expect(found).toEqual([path.join(root, "p"), path.join(root, "p"), path.join(root, "p")]);
  });

  it("refuses a project's folder, or one of its own files or folders, named directly; a user's folder inside one can be named", async () => {
    const root = tree({ "p/catalog.json": CATALOG, "p/keys.json": KEYS, "p/progress/i.json": "{}", "p/mine/m.md": "m" });
    for (const target of [path.join(root, "p"), path.join(root, "p", "keys.json"), path.join(root, "p", "progress"), path.join(root, "p", "progress", "i.json")]) {
      const refused = await walk([target], { maxFileSize: 1000 }).then(
        () => null,
        (error: unknown) => error as { code: string; exitCode: number; message: string },
      );
      expect(refused, target).toMatchObject({ code: "INPUT_IS_PROJECT", exitCode: 2 });
      expect(refused?.message).toContain(`${JSON.stringify(target)} ${target.endsWith("/p") ? "is a semsearch project's folder (it holds catalog.json)" : `is part of a semsearch project (its folder ${JSON.stringify(path.join(root, "p"))} holds catalog.json)`}`);
    }
    expect((await walk([path.join(root, "p", "mine")], { maxFileSize: 1000 })).files.map((file) => file.path)).toEqual(["mine/m.md"]);
  });
});

describe("stored paths", () => {
  const stored = ["notes/a.md", "notes/sub/b.md", "docs/notes/a.md", "other/a.md", "notes2/x.md"];
  it("a given path names the stored paths equal to or under the longest end of it that names any", () => {
    expect(pathsNamed(stored, "/home/me/notes/a.md")).toEqual(["notes/a.md"]);
    expect(pathsNamed(stored, "/home/me/docs/notes/a.md")).toEqual(["docs/notes/a.md"]);
    // `archive` typed inside notes/ is notes/archive, not also the folder archive added beside notes
    const two = ["notes/archive/old.md", "notes/n.md", "archive/keep.md"];
    expect(pathsNamed(two, "/home/me/notes/archive")).toEqual(["notes/archive/old.md"]);
    expect(pathsNamed(two, "/home/me/archive")).toEqual(["archive/keep.md"]);
    expect(pathsNamed(stored, "/home/me/notes/")).toEqual(["notes/a.md", "notes/sub/b.md"]);
    expect(pathsNamed(stored, "/x/notes/sub")).toEqual(["notes/sub/b.md"]);
    expect(pathsNamed(stored, "/x/nothing.md")).toEqual([]);
  });
  it("a scope is a folder's prefix or a file's path", () => {
    expect(["notes/a.md", "notes2/x.md", "docs/notes/a.md"].filter((file) => inScope(file, ["notes/"]))).toEqual(["notes/a.md"]);
    expect(inScope("notes/a.md", ["notes/a.md"])).toBe(true);
    expect(inScope("notes/a.mdx", ["notes/a.md"])).toBe(false);
  });
});
