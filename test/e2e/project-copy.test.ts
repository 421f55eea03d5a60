/**
 * `semsearch project copy <from> <to>` through the built CLI: a project copied whole (same index ids,
 * same search results, same keys, nothing embedded again), between directories and, with the tests'
 * S3 server, to a bucket and back; the places it refuses; a copy killed half-way reported by every
 * command at the destination and finished by running it again.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, SAMPLE, type RunOptions } from "../helpers/cli.js";
import { freshBucket, s3Available, s3Env, type TestBucket } from "../helpers/s3.js";

/** The files under `dir`, however deep. */
const countFiles = (dir: string): number => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).length;

describe("project copy", () => {
  let home: string;
  let source: string;
  let indexId: string;
  let keyId: string;
  const cli = (args: string[], options: RunOptions = {}) => runCli(["--json", ...args], { cwd: home, ...options, env: { ...(s3Available() ? s3Env() : {}), ...options.env } });
  async function ok(args: string[], options: RunOptions = {}) {
    const result = await cli(args, options);
    expect(result.exitCode, `${args.join(" ")}: ${result.stderr}`).toBe(0);
    return JSON.parse(result.stdout);
  }
  const search = (project: string) => ok(["--project", project, "search", indexId, "solar power", "--limit", "5"]);
  /** What a search, the index list and the keys say: the same in a faithful copy. */
  const seen = async (project: string) => ({
    search: await search(project),
    indexes: (await ok(["--project", project, "index", "list"])).indexes.map((index: { id: string; status: unknown; configuration: unknown }) => [index.id, index.status, index.configuration]),
    keys: (await ok(["--project", project, "keys", "list"])).keys,
  });

  beforeAll(async () => {
    home = mkdtempSync(path.join(tmpdir(), "semsearch-copy-"));
    source = path.join(home, "source");
    await ok(["--project", source, "objects", "add", SAMPLE]);
    indexId = (await ok(["--project", source, "index", "create", "--searchable", "title,body", "--wait"])).id;
    keyId = (await ok(["--project", source, "keys", "create", "--name", "k"])).id;
  });

  it("copies a directory whole: same index, results and keys, nothing to index again", async () => {
    const copied = await ok(["project", "copy", source, path.join(home, "copy")]);
    expect(copied).toMatchObject({ from: source, to: path.join(home, "copy"), indexes: 1 });
    expect(copied.files).toBeGreaterThan(10);
    const [before, after] = [await seen(source), await seen(path.join(home, "copy"))];
    expect(after).toEqual(before);
    expect(after.keys.map((key: { id: string }) => key.id)).toEqual([keyId]);
    expect(after.indexes[0][1]).toMatchObject({ READY: 40, UPLOADED: 0, PROCESSING: 0 });
    // (the copy is a project of its own: a write there does not reach the source)
    await ok(["--project", path.join(home, "copy"), "objects", "delete", "solar-power"]);
    expect((await ok(["--project", source, "objects", "get", "solar-power"])).id).toBe("solar-power");
  });

  it("refuses a destination that is a project or holds files, a copy into itself, and a source that is not there", async () => {
    const refused = async (args: string[], exit: number, code: string) => {
      const result = await cli(args);
      expect(result.exitCode, result.stderr).toBe(exit);
      expect(JSON.parse(result.stderr).errors[0].code).toBe(code);
    };
    await ok(["project", "copy", source, path.join(home, "taken")]);
    await refused(["project", "copy", source, path.join(home, "taken")], 5, "PROJECT_EXISTS");
    const busy = path.join(home, "busy");
    mkdirSync(busy);
    writeFileSync(path.join(busy, "notes.txt"), "mine\n");
    await refused(["project", "copy", source, busy], 5, "DESTINATION_NOT_EMPTY");
    expect(readdirSync(busy)).toEqual(["notes.txt"]);
    await refused(["project", "copy", source, path.join(source, "inner")], 2, "COPY_INTO_ITSELF");
    await refused(["project", "copy", path.join(home, "nothing"), path.join(home, "other")], 3, "PROJECT_NOT_FOUND");
    await refused(["project", "copy", source, "s3://bucket/p\u0007"], 2, "INVALID_PROJECT");
    // (a link into the source is inside it; a hidden file is something held)
    symlinkSync(source, path.join(home, "link"));
    await refused(["project", "copy", source, path.join(home, "link", "inner")], 2, "COPY_INTO_ITSELF");
    mkdirSync(path.join(home, "hidden"));
    writeFileSync(path.join(home, "hidden", ".env"), "SECRET=1\n");
    await refused(["project", "copy", source, path.join(home, "hidden")], 5, "DESTINATION_NOT_EMPTY");
  });

  it("refuses a damaged source before writing anything", async () => {
    const damaged = path.join(home, "damaged");
    cpSync(source, damaged, { recursive: true });
    const dataFolder = path.join(damaged, "data", "objects.lance", "data");
    rmSync(path.join(dataFolder, readdirSync(dataFolder)[0] as string));
    const result = await cli(["project", "copy", damaged, path.join(home, "from-damaged")]);
    expect(result.exitCode, result.stderr).toBe(6);
    expect(JSON.parse(result.stderr).errors[0].code).toBe("CORRUPT_TABLE");
    expect(readdirSync(path.join(home, "from-damaged")).filter((name) => name !== "write.lock")).toEqual([]);
  });

  it("a copy killed half-way is reported at the destination, and running it again finishes it", async () => {
    const target = path.join(home, "killed");
    const killed = await cli(["project", "copy", source, target], { env: { SEMSEARCH_FAILPOINT: "copy:file@5" } });
    expect(killed.signal).toBe("SIGKILL");
    const using = await cli(["--project", target, "index", "list"]);
    expect(using.exitCode).toBe(6);
    expect(JSON.parse(using.stderr).errors[0]).toMatchObject({ code: "COPY_UNFINISHED" });
    expect(JSON.parse(using.stderr).errors[0].hint).toContain(`semsearch project copy ${source} ${target}`);
    // (another source may not finish it)
    const other = await cli(["project", "copy", path.join(home, "taken"), target]);
    expect(JSON.parse(other.stderr).errors[0].code).toBe("DESTINATION_NOT_EMPTY");
    await ok(["project", "copy", source, target]);
    expect((await seen(target)).search).toEqual((await seen(source)).search);
  });

  it("a copy run again starts over: nothing the stopped one wrote stays, though another project now has the source's place", async () => {
    const [place, target] = [path.join(home, "moving"), path.join(home, "restarted")];
    cpSync(source, place, { recursive: true });
    // (more versions of the object table than the project that takes its place will have: a version
    // the stopped copy left would be the newest there)
    for (let i = 0; i < 2; i++) await ok(["--project", place, "objects", "add", SAMPLE]);
    // (killed among the manifests, which the copy writes last)
    const killed = await cli(["project", "copy", place, target], { env: { SEMSEARCH_FAILPOINT: `copy:file@${countFiles(path.join(place, "data")) - 2}` } });
    expect(killed.signal).toBe("SIGKILL");
    rmSync(place, { recursive: true });
    await ok(["--project", place, "objects", "add", "-"], { input: JSON.stringify({ id: "only-one", title: "Tidal power", body: "The tide turns a turbine." }) });
    await ok(["--project", place, "index", "create", "--searchable", "title,body", "--wait"]);
    await ok(["project", "copy", place, target]);
    expect((await ok(["--project", target, "objects", "list"])).objects.map((o: { id: string }) => o.id)).toEqual(["only-one"]);
    const indexes = async (project: string) => (await ok(["--project", project, "index", "list"])).indexes.map((index: { id: string; status: unknown }) => [index.id, index.status]);
    expect(await indexes(target)).toEqual(await indexes(place));
    expect((await ok(["--project", target, "keys", "list"])).keys).toEqual([]);
  });

  it("a copy killed after its catalog was written is finished: the destination is a project", async () => {
    const target = path.join(home, "late");
    const killed = await cli(["project", "copy", source, target], { env: { SEMSEARCH_FAILPOINT: "copy:end" } });
    expect(killed.signal).toBe("SIGKILL");
    expect(await search(target)).toEqual(await search(source));
    expect((await cli(["project", "copy", source, target])).exitCode).toBe(5);
  });

  describe.skipIf(!s3Available())("with a bucket", () => {
    let bucket: TestBucket;
    beforeAll(async () => {
      bucket = await freshBucket("project-copy");
    });
    afterAll(async () => bucket?.remove());

    it("copies a directory to a bucket, the bucket to another prefix, and back to a directory", async () => {
      const [first, second, back] = [bucket.uri("first"), bucket.uri("second"), path.join(home, "back")];
      await ok(["project", "copy", source, first]);
      await ok(["project", "copy", first, second]);
      await ok(["project", "copy", second, back]);
      const expected = await seen(source);
      expect(await seen(back)).toEqual(expected);
      expect(await seen(first)).toEqual(expected);
      expect(await search(second)).toEqual(expected.search);
      const refused = await cli(["project", "copy", source, first]);
      expect(JSON.parse(refused.stderr).errors[0].code).toBe("PROJECT_EXISTS");
    });

    it("refuses a prefix that holds another project's state records (its keys would work on the copy)", async () => {
      await bucket.put("stale/state/keys.json/000000000001", JSON.stringify({ version: 1, secret: "x".repeat(43), keys: [] }));
      const refused = await cli(["project", "copy", source, bucket.uri("stale")]);
      expect(refused.exitCode, refused.stderr).toBe(5);
      expect(JSON.parse(refused.stderr).errors[0]).toMatchObject({ code: "DESTINATION_NOT_EMPTY" });
      expect(JSON.parse(refused.stderr).errors[0].message).toContain("state/keys.json");
    });
  });
});
