import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { Project } from "../../../src/engine/project.js";
import { tempDir } from "../../helpers/temp.js";


describe("Project", () => {
  const project = new Project(path.join(tempDir("semsearch-project-"), "p"));
  beforeAll(() => project.init());

  it("gives a fresh progress record per unsaved index, so changing one changes no other", async () => {
    const first = await project.progress("idx_a");
    first.processingSeq = 7;
    first.errors.x = { seq: 1, message: "m" };
    expect({ ...(await project.progress("idx_b")), errors: { ...(await project.progress("idx_b")).errors } }).toEqual({ indexedSeq: 0, optimizedSeq: 0, processingSeq: null, errors: {} });
  });

  it("keeps errors of objects whose ids are Object.prototype names", async () => {
    const progress = await project.progress("idx_proto");
    for (const id of ["__proto__", "constructor", "toString"]) progress.errors[id] = { seq: 1, message: id };
    await project.saveProgress("idx_proto", progress);
    const read = await project.progress("idx_proto");
    expect(Object.keys(read.errors).sort()).toEqual(["__proto__", "constructor", "toString"]);
    expect(Object.hasOwn(read.errors, "hasOwnProperty")).toBe(false);
    expect(read.errors["__proto__"]).toEqual({ seq: 1, message: "__proto__" });
  });

  it("reserves sequence numbers without reuse", async () => {
    expect(await project.reserveSeq(3)).toBe(1);
    expect(await project.reserveSeq(2)).toBe(4);
    expect(await project.lastSeq()).toBe(5);
  });

  it("never hands out a sequence number below one stored state refers to, even with its counter lost", async () => {
    const other = new Project(path.join(tempDir("semsearch-project-"), "p"));
    await other.init();
    writeFileSync(path.join(other.dir, "seq"), "garbage");
    expect(await other.lastSeq()).toBe(0);
    await other.ensureSeqAtLeast(40);
    expect(await other.reserveSeq(1)).toBe(41);
    await other.ensureSeqAtLeast(10);
    expect(await other.reserveSeq(1)).toBe(42);
  });

  it("reads a damaged progress file as nothing indexed (derived state: indexing again rebuilds it)", async () => {
    writeFileSync(path.join(project.dir, "progress", "idx_bad.json"), '{"indexedSeq": "x"}');
    expect(await project.progress("idx_bad")).toMatchObject({ indexedSeq: 0, optimizedSeq: 0, processingSeq: null });
  });

  it("refuses a damaged catalog with an EnvironmentError naming the file (exit 6)", async () => {
    const other = new Project(path.join(tempDir("semsearch-project-"), "p"));
    await other.init();
    for (const text of ["", "{", '{"version":1,"inde', "\u0000garbage \u00ff{[", '{"version":1,"indexes":{}}', '{"version":1,"indexes":[{"id":"idx_a","configuration":{"index_type":{"name":"text"},"bogus":1},"model":"m","dimension":2,"created_at":"t"}]}']) {
      writeFileSync(path.join(other.dir, "catalog.json"), text);
      await expect(other.indexes()).rejects.toEqual(expect.objectContaining({ code: "CORRUPT_PROJECT", exitCode: 6, message: expect.stringContaining("catalog.json") }));
    }
  });

  it("says where a damaged state file is wrong without quoting it (a catalog linked to another file, and errors reach HTTP clients)", async () => {
    const other = new Project(path.join(tempDir("semsearch-project-"), "p"));
    await other.init();
    const catalog = path.join(other.dir, "catalog.json");
    const record = { id: "idx_a", configuration: { index_type: { name: "text" } }, model: "m", dimension: 2, created_at: "t" };
    const cases: [string, string][] = [
      ["SECRET:x:0:0:root:/root:/bin/bash\n", "not valid JSON (line 1, column 1)"],
      ['{"version":1,\n "indexes":[SECRET]}', "not valid JSON (line 2, column 13)"],
      ['{"version":1,"indexes":[{"id":"idx_a"', "not valid JSON (it ends early, at line 1)"],
      ["[".repeat(200_000), "not valid JSON (it ends early, at line 1)"],
      ['{"version":1,"indexes":\n' + "[".repeat(200_000) + "SECRET", "not valid JSON (line 2, column 200001)"],
      [JSON.stringify({ version: "SECRET", indexes: [] }), "version: expected 1"],
      [JSON.stringify({ version: 1, indexes: [{ ...record, id: "SECRET" }] }), "indexes.0.id: expected /^idx_[a-z0-9]+$/"],
      [JSON.stringify({ version: 1, indexes: [{ ...record, dimension: "SECRET" }] }), "indexes.0.dimension: expected number"],
      [JSON.stringify({ version: 1, indexes: [{ ...record, dimension: 7777777.5 }] }), "indexes.0.dimension: expected a whole number"],
      [JSON.stringify({ version: 1, indexes: [{ ...record, normalization: "SECRET" }] }), 'indexes.0.normalization: expected "NFC"'],
    ];
    for (const [text, reason] of cases) {
      writeFileSync(catalog, text);
      const error = await other.indexes().then(
        () => {
          throw new Error(`${text} was read`);
        },
        (caught: unknown) => caught as Error,
      );
      expect(error.message, text.slice(0, 80)).toContain(`${catalog} is damaged: ${reason}`);
      expect(JSON.stringify({ message: error.message, hint: (error as { hint?: string }).hint }), text.slice(0, 80)).not.toMatch(/SECRET|7777777/);
    }
  });

  it("a project path that is a file is an EnvironmentError, not a crash", async () => {
    const file = path.join(tempDir("semsearch-project-"), "file");
    writeFileSync(file, "x");
    const onFile = new Project(file);
    await expect(onFile.exists()).rejects.toEqual(expect.objectContaining({ code: "ENOTDIR", exitCode: 6 }));
    await expect(onFile.init()).rejects.toEqual(expect.objectContaining({ exitCode: 6 }));
    await expect(new Project(path.join(file, "below")).init()).rejects.toEqual(expect.objectContaining({ exitCode: 6 }));
  });

  it("saves and reads the catalog and progress atomically", async () => {
    await project.saveProgress("idx_a", { indexedSeq: 3, optimizedSeq: 1, processingSeq: null, errors: {} });
    expect((await project.progress("idx_a")).indexedSeq).toBe(3);
    await project.saveIndexes([{ id: "idx_a", configuration: { index_type: { name: "text" } }, model: "m", dimension: 2, created_at: "t" }]);
    expect((await project.indexes()).map((index) => index.id)).toEqual(["idx_a"]);
  });

  it("a catalog missing beside data is a damaged project (exit 6 naming it), not a new one; nothing is written into it", async () => {
    const other = new Project(path.join(tempDir("semsearch-project-"), "p"));
    await other.init();
    writeFileSync(path.join(other.dir, "seq"), "4");
    rmSync(path.join(other.dir, "catalog.json"));
    const damaged = expect.objectContaining({ code: "CORRUPT_PROJECT", exitCode: 6, message: expect.stringContaining(path.join(other.dir, "catalog.json")) });
    await expect(other.exists()).rejects.toEqual(damaged);
    await expect(other.indexes()).rejects.toEqual(damaged);
    await expect(other.init()).rejects.toEqual(damaged);
    await expect(other.spoolFile()).rejects.toEqual(damaged);
    expect(existsSync(path.join(other.dir, "catalog.json"))).toBe(false);
    expect(existsSync(path.join(other.dir, "tmp"))).toBe(false);
  });

  it("a project with its directories but nothing in them (an init cut short) is new", async () => {
    const other = new Project(path.join(tempDir("semsearch-project-"), "p"));
    mkdirSync(path.join(other.dir, "data"), { recursive: true });
    mkdirSync(path.join(other.dir, "progress"));
    expect(await other.exists()).toBe(false);
    expect(await other.indexes()).toEqual([]);
    await other.init();
    expect(await other.exists()).toBe(true);
  });

  it("an existing catalog that cannot be read stops init before it writes", async () => {
    const other = new Project(path.join(tempDir("semsearch-project-"), "p"));
    await other.init();
    rmSync(path.join(other.dir, "progress"), { recursive: true });
    writeFileSync(path.join(other.dir, "catalog.json"), "{");
    await expect(other.init()).rejects.toEqual(expect.objectContaining({ code: "CORRUPT_PROJECT" }));
    expect(existsSync(path.join(other.dir, "progress"))).toBe(false);
  });
});
