/**
 * What `objects add <folder>` must not read, or must not say twice (issue 40), in process against
 * the built engine: another semsearch project's folder (its catalog, tables and keys file), found by
 * what it holds and not by its name, also once damaged; such a folder or file named directly is
 * refused; and a file deleted while an add reads the folder is gone, not skipped as unreadable.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { addObjects, failure, ok } from "../helpers/in-process.js";
import { tempDir } from "../helpers/temp.js";

/** `docs/guide/a.md`, and beside it a project of its own made as `--project docs/oldproj` makes one: an object, an API key. */
async function docsWithProject(): Promise<{ docs: string; old: string; project: string }> {
  const root = tempDir();
  const docs = path.join(root, "docs");
  mkdirSync(path.join(docs, "guide"), { recursive: true });
  writeFileSync(path.join(docs, "guide", "a.md"), "# Guide\n\nHow to begin.\n");
  const old = path.join(docs, "oldproj");
  await ok(old, async (engine) => {
    await addObjects(engine, '{"id":"x1","title":"An object of the old project"}\n');
    await engine.createKey({ name: "laptop" });
  });
  expect(JSON.parse(readFileSync(path.join(old, "keys.json"), "utf8")).secret).toEqual(expect.any(String));
  return { docs, old, project: path.join(root, "project") };
}

describe("objects add of a folder holding another project", () => {
  it("leaves the project's folder out with the reason, also once its catalog and keys file are lost; never stores its files", async () => {
    const { docs, old, project } = await docsWithProject();
    const skip = (mark: string) => ({ path: "docs/oldproj/", reason: `a semsearch project's folder (it holds ${mark}): its files are the project's data, not documents (name a folder inside it to add that folder)`, kind: "project" });
    const first = await ok(project, (engine) => engine.addFiles([docs]));
    expect([first.files.added, first.skipped]).toEqual([1, [skip("catalog.json")]]);
    // damaged: no catalog (then no keys file either), its data still there
    rmSync(path.join(old, "catalog.json"));
    expect((await ok(project, (engine) => engine.addFiles([docs]))).skipped).toEqual([skip("keys.json")]);
    rmSync(path.join(old, "keys.json"));
    expect((await ok(project, (engine) => engine.addFiles([docs], { sync: true }))).skipped).toEqual([skip("data/objects.lance")]);
    expect((await ok(project, (engine) => engine.listObjects())).map((object) => object.id)).toEqual(["docs/guide/a.md"]);
  });

  it("refuses the project's folder or one of its files named directly, before anything is written; a folder of the user's inside it can be named", async () => {
    const { docs, old, project } = await docsWithProject();
    for (const target of [old, path.join(old, "progress"), path.join(old, "data")]) {
      const error = await failure(project, { command: `objects add ${target}`, run: (engine) => engine.addFiles([docs, target]) });
      expect([error.code, error.exitCode], target).toEqual(["INPUT_IS_PROJECT", 2]);
      expect(error.hint).toContain(`--project ${JSON.stringify(old)}`);
    }
    expect(await ok(project, (engine) => engine.listObjects())).toEqual([]);
    mkdirSync(path.join(old, "mine"));
    writeFileSync(path.join(old, "mine", "m.md"), "# Mine\n");
    expect((await ok(project, (engine) => engine.addFiles([path.join(old, "mine")]))).files.added).toBe(1);
    // the keys file as JSON input (the CLI reads a .json argument as objects): refused, exit 2
    const keys = await runCli(["--project", project, "--json", "objects", "add", path.join(old, "keys.json")]);
    expect([keys.exitCode, JSON.parse(keys.stderr).errors[0].code, keys.stdout]).toEqual([2, "INPUT_IS_PROJECT", ""]);
  });
});

describe("a file deleted while an add reads the folder", () => {
  it("is gone (deleted with --sync), not skipped as unreadable, so the next add has nothing to say of it", async () => {
    const root = tempDir();
    const notes = path.join(root, "notes");
    mkdirSync(notes);
    // more files than an add reads at once (32), so the last is read after the first are done
    for (let i = 0; i < 40; i++) writeFileSync(path.join(notes, `f${String(i).padStart(2, "0")}.txt`), `file ${i}\n`);
    const project = path.join(root, "project");
    await ok(project, (engine) => engine.addFiles([notes]));
    for (let i = 1; i < 40; i++) writeFileSync(path.join(notes, `f${String(i).padStart(2, "0")}.txt`), `file ${i}, changed\n`);
    const last = path.join(notes, "f39.txt");
    // deleted once the first file (unchanged) is done: after the walk found it, before it is read
    const onProgress = (done: number) => done === 1 && rmSync(last);
    const result = await ok(project, (engine) => engine.addFiles([notes], { sync: true, onProgress }));
    expect([result.skipped, result.files.unchanged, result.files.replaced, result.files.deleted, result.deleted]).toEqual([[], 1, 38, 1, 1]);
    const again = await ok(project, (engine) => engine.addFiles([notes], { sync: true }));
    expect([again.files.unchanged, again.files.deleted, again.skipped]).toEqual([39, 0, []]);
    // without --sync, such a file is counted as gone
    writeFileSync(last, "back\n");
    await ok(project, (engine) => engine.addFiles([notes]));
    writeFileSync(last, "back, changed\n");
    const plain = await ok(project, (engine) => engine.addFiles([notes], { onProgress }));
    expect([plain.skipped, plain.gone]).toEqual([[], 1]);
  });
});
