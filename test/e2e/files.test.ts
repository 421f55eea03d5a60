/** Files as objects (issue 29), through the real CLI: CSV and TSV rows as objects. */
import { mkdirSync, readFileSync, renameSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import PDFDocument from "pdfkit";
import { describe, expect, it } from "vitest";
import { cliJson, ROOT, runCli, tempProject } from "../helpers/cli.js";

describe("objects add of CSV and TSV files", () => {
  it("adds a row per object, the header naming the fields; typed filters read the text; a bad row anywhere adds nothing", async () => {
    const project = tempProject();
    const dir = path.dirname(project);
    const csv = path.join(dir, "products.csv");
    writeFileSync(csv, '\uFEFFsku,title,price,note\r\nTW-1,"Rain jacket, light",120,"sealed seams"\r\nTW-2,Wool sweater,85,\r\nTW-3,"Trail shoes, ""grippy""",95,muddy paths\r\n');
    // no id column: refused as for JSON, naming the column that looks like one
    const refused = await runCli(["--project", project, "objects", "add", csv]);
    expect([refused.exitCode, refused.stderr]).toEqual([4, expect.stringContaining(`${csv}:2: no "id" field; did you mean --id-field sku?`)]);
    expect(await cliJson(project, ["objects", "add", csv, "--id-field", "sku"])).toEqual({ count: 3, ids: ["TW-1", "TW-2", "TW-3"] });
    expect((await cliJson(project, ["objects", "get", "TW-3"])).object).toEqual({ sku: "TW-3", title: 'Trail shoes, "grippy"', price: "95", note: "muddy paths" });
    expect((await cliJson(project, ["objects", "get", "TW-2"])).object).toEqual({ sku: "TW-2", title: "Wool sweater", price: "85" }); // (an empty cell is no field)
    const { id } = await cliJson(project, ["index", "create", "--searchable", "title,note", "--filterable", "price", "--field-type", "price=float", "--wait"]);
    const cheap = await cliJson(project, ["search", id, "clothes", "--filter", "price:<100"]);
    expect(cheap.results.map((r: { id: string }) => r.id).sort()).toEqual(["TW-2", "TW-3"]);

    // TSV on standard input, said with --input-format; a malformed file among the inputs adds nothing
    const tsv = "sku\ttitle\tprice\nTW-4\tCanvas tote\t25\n";
    expect(await cliJson(project, ["objects", "add", "-", "--input-format", "tsv", "--id-field", "sku"], { input: tsv })).toEqual({ count: 1, ids: ["TW-4"] });
    const bad = path.join(dir, "bad.csv");
    writeFileSync(bad, "sku,title\nTW-5,Parka\nTW-6,Hat,extra\n");
    const failed = await runCli(["--project", project, "--json", "objects", "add", csv, bad, "--id-field", "sku"]);
    expect(failed.exitCode).toBe(4);
    expect(JSON.parse(failed.stderr).errors[0].message).toBe(`${bad}:3: the row has 3 fields, the header 2`);
    expect((await cliJson(project, ["objects", "list"])).objects.map((o: { id: string }) => o.id)).toEqual(["TW-1", "TW-2", "TW-3", "TW-4"]);
  });
});

/** Writes `files` (path → content) under `root`, making folders as needed. */
function writeTree(root: string, files: Record<string, string | Buffer>): void {
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), content);
  }
}

interface AddFilesJson {
  count: number;
  files: Record<string, number>;
  deleted: number;
  skipped: { path: string; reason: string; kind: string }[];
  ignored: number;
  gone: number;
}

describe("objects add of a folder", () => {
  it("reads each format into an object under its path, skips what it cannot read with a reason, and honours ignore files", async () => {
    const project = tempProject();
    const notes = path.join(path.dirname(project), "notes");
    writeTree(notes, {
      "plants.md": "---\ntitle: How plants eat\ntags: [botany, light]\n---\n# Photosynthesis\n\nLeaves turn *sunlight* into\nsugar.\n",
      "weather/rain.txt": "Rain falls from clouds\nwhen drops grow heavy.\n\nThen it stops.\n",
      "page.html": "<html><head><title>Tides</title><script>alert(1)</script></head><body><nav>Home | About</nav><p>The moon pulls the sea.</p></body></html>",
      "rows.csv": "id,name\nr1,First row\nr2,Second row\n",
      "one.json": '{"id": "j1", "title": "From JSON", "path": "its own"}',
      "utf16.txt": Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("Wide text here", "utf16le")]),
      "latin1.txt": Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
      "blob.bin": Buffer.from([0, 1, 2, 3, 0, 255]),
      "notes.log": "a log line\n",
      "huge.txt": "x".repeat(3000),
      "drafts/secret.md": "# Draft\n",
      "private.md": "# Private\n",
      ".env": "TOKEN=secret\n",
      ".gitignore": "drafts/\n",
      ".semsearchignore": "private.md\n",
      "node_modules/pkg/readme.md": "# A package\n",
    });
    symlinkSync(path.join(notes, "nowhere.md"), path.join(notes, "broken.md"));
    const result = await cliJson<AddFilesJson>(project, ["objects", "add", notes, "--max-file-size", "2KB"]);
    expect(result.files).toEqual({ added: 6, replaced: 0, moved: 0, unchanged: 0, deleted: 0, skipped: 5 });
    expect(result.count).toBe(7); // two CSV rows
    expect(Object.fromEntries(result.skipped.map((s) => [s.path, s.reason]))).toEqual({
      "notes/blob.bin": "binary, of a format semsearch does not read (.bin)",
      "notes/broken.md": expect.stringMatching(/^a broken link/),
      "notes/huge.txt": "2.9 KiB is over the 2.0 KiB limit (--max-file-size)",
      "notes/latin1.txt": expect.stringContaining("not UTF-8 text: byte 0xe9"),
      "notes/notes.log": ".log is not a format semsearch reads (to read it as plain text: --ext log)",
    });
    const ids = (await cliJson(project, ["objects", "list"])).objects.map((o: { id: string }) => o.id);
    expect(ids).toEqual(["j1", "notes/page.html", "notes/plants.md", "notes/utf16.txt", "notes/weather/rain.txt", "r1", "r2"]);
    const plants = (await cliJson(project, ["objects", "get", "notes/plants.md"])).object;
    expect(plants).toMatchObject({ title: "How plants eat", body: "Photosynthesis\n\nLeaves turn sunlight into sugar.", tags: ["botany", "light"], path: "notes/plants.md", ext: "md", size: 105 });
    expect(plants.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(new Date(plants.modified).toISOString()).toBe(plants.modified);
    expect((await cliJson(project, ["objects", "get", "notes/weather/rain.txt"])).object).toMatchObject({ title: "rain", body: "Rain falls from clouds when drops grow heavy.\n\nThen it stops." });
    expect((await cliJson(project, ["objects", "get", "notes/utf16.txt"])).object.body).toBe("Wide text here");
    const page = (await cliJson(project, ["objects", "get", "notes/page.html"])).object;
    expect(page.title).toBe("Tides");
    expect(page.body).toContain("The moon pulls the sea.");
    expect(page.body).not.toMatch(/alert|Home \| About/);
    // JSON and CSV objects keep their ids and fields; the file fields fill in only what they lack
    expect((await cliJson(project, ["objects", "get", "j1"])).object).toMatchObject({ title: "From JSON", path: "its own", ext: "json" });
    expect((await cliJson(project, ["objects", "get", "r2"])).object).toMatchObject({ name: "Second row", path: "notes/rows.csv" });

    // the same ids from another working directory, and a file named directly is stored as in its folder
    // (one.json's object has a path of its own, so its file cannot be recognised as unchanged: it is written again)
    const again = await cliJson<AddFilesJson>(project, ["objects", "add", "notes", path.join(notes, "plants.md"), "--max-file-size", "2KB"], { cwd: path.dirname(notes) });
    expect([again.count, again.files.added, again.files.unchanged]).toEqual([1, 1, 5]);
  });

  it("re-adds only what changed; --sync deletes what is gone; delete --path removes a file's objects", async () => {
    const project = tempProject();
    const notes = path.join(path.dirname(project), "notes");
    writeTree(notes, { "a.md": "# Alpha\n\nFirst.\n", "b.txt": "Bravo.\n", "c.txt": "Charlie.\n", "table.csv": "id,v\nx1,1\nx2,2\n" });
    expect((await cliJson<AddFilesJson>(project, ["objects", "add", notes])).count).toBe(5);
    const before = (await cliJson(project, ["objects", "get", "notes/b.txt"])).updated_at;

    writeFileSync(path.join(notes, "a.md"), "# Alpha\n\nFirst, edited.\n");
    renameSync(path.join(notes, "c.txt"), path.join(notes, "renamed.txt"));
    writeFileSync(path.join(notes, "table.csv"), "id,v\nx1,10\n"); // x2 removed
    const plain = await runCli(["--project", project, "objects", "add", notes]);
    expect(plain.exitCode).toBe(0);
    expect(plain.stdout).toBe("3 objects written from 3 files (1 new, 2 changed), 1 unchanged, 1 object deleted.\n");
    expect(plain.stderr).toContain("1 file was added before and is now gone from the folder or left out (an ignore file, --glob, --exclude): its objects stay (add --sync to delete them).");
    expect((await cliJson(project, ["objects", "get", "notes/b.txt"])).updated_at).toBe(before); // unchanged: not written
    expect((await cliJson(project, ["objects", "get", "notes/a.md"])).object.body).toBe("Alpha\n\nFirst, edited.");
    let ids = (await cliJson(project, ["objects", "list"])).objects.map((o: { id: string }) => o.id);
    expect(ids).toEqual(["notes/a.md", "notes/b.txt", "notes/c.txt", "notes/renamed.txt", "x1"]);

    // --sync deletes what is gone; a CSV renamed keeps its rows (their ids come again from the new file)
    renameSync(path.join(notes, "table.csv"), path.join(notes, "moved.csv"));
    const synced = await cliJson<AddFilesJson>(project, ["objects", "add", notes, "--sync"]);
    expect([synced.count, synced.deleted, synced.files.deleted, synced.files.moved]).toEqual([1, 1, 1, 1]);
    ids = (await cliJson(project, ["objects", "list"])).objects.map((o: { id: string }) => o.id);
    expect(ids).toEqual(["notes/a.md", "notes/b.txt", "notes/renamed.txt", "x1"]);
    expect((await cliJson(project, ["objects", "get", "x1"])).object.path).toBe("notes/moved.csv");

    expect(await cliJson(project, ["objects", "delete", "--path", path.join(notes, "moved.csv")])).toEqual({ count: 1, deleted: ["x1"] });
    const missing = await runCli(["--project", project, "objects", "delete", "--path", path.join(notes, "never.md")]);
    expect([missing.exitCode, missing.stderr]).toEqual([3, expect.stringContaining("No stored object was read from")]);
    // a folder, typed relative to where the command runs
    expect((await cliJson(project, ["objects", "delete", "--path", "notes"], { cwd: path.dirname(notes) })).count).toBe(3);
    expect((await cliJson(project, ["objects", "list"])).objects).toEqual([]);
  });

  it("a file whose object has the id of another file's object is skipped, so the two do not overwrite each other at every add", async () => {
    const project = tempProject();
    const notes = path.join(path.dirname(project), "notes");
    writeTree(notes, { "a.json": '[{"id":"x1","t":"a"}]', "b.json": '[{"id":"x1","t":"b"}]', "c.md": "hello", "d.json": '{"id":"notes/c.md","t":"d"}' });
    const reasons = [
      { path: "notes/b.json", reason: 'its object "x1" has the id of an object of notes/a.json (ids are one per object across files)', kind: "id" },
      { path: "notes/d.json", reason: 'its object "notes/c.md" has the id of an object of notes/c.md (ids are one per object across files)', kind: "id" },
    ];
    const first: AddFilesJson = await cliJson(project, ["objects", "add", notes]);
    expect([first.count, first.skipped]).toEqual([2, reasons]);
    const again: AddFilesJson = await cliJson(project, ["objects", "add", notes]);
    expect([again.count, again.files.unchanged, again.skipped]).toEqual([0, 2, reasons]);
    expect((await cliJson(project, ["objects", "get", "x1"])).object.t).toBe("a");
    expect((await cliJson(project, ["objects", "get", "notes/c.md"])).object.body).toBe("hello");
  });

  it("images in a folder become objects whose path an image index reads; without an image index they are skipped", async () => {
    const project = tempProject();
    const pics = path.join(path.dirname(project), "pics");
    writeTree(pics, { "sub/blue.png": readFileSync(path.join(ROOT, "fixtures", "images", "blue.png")), "notes.md": "# Blue things\n" });
    const before = await cliJson<AddFilesJson>(project, ["objects", "add", pics]);
    expect(before.skipped).toEqual([{ path: "pics/sub/blue.png", reason: "an image, and the project has no image index to search it", kind: "image" }]);
    const { id } = await cliJson(project, ["index", "create", "--type", "image", "--model", path.join(ROOT, "fixtures", "models", "tiny-clip"), "--wait"]);
    const after = await cliJson<AddFilesJson>(project, ["objects", "add", pics, "--wait"]);
    expect([after.files.added, after.files.unchanged]).toEqual([1, 1]);
    expect((await cliJson(project, ["objects", "get", "pics/sub/blue.png"])).object).toMatchObject({ path: "pics/sub/blue.png", ext: "png", size: statSync(path.join(ROOT, "fixtures", "images", "blue.png")).size });
    const page = await cliJson(project, ["search", id, "blue", "--result-fields", "highlights", "--limit", "5"]);
    const image = page.results.find((result: { id: string }) => result.id === "pics/sub/blue.png");
    expect(image.highlights).toEqual([{ reference_type: "image", media_identifier: "pics/sub/blue.png" }]);
  });

  it("a file whose parsing uses too much processor time is stopped and skipped with the reason; the others are added", async () => {
    const project = tempProject();
    const notes = path.join(path.dirname(project), "notes");
    // micromark takes about 40 s of processor time over this 40 KB line of emphasis marks
    writeTree(notes, { "bomb.md": `${"*".repeat(20_000)}a${"*".repeat(20_000)}\n`, "fine.md": "# Fine\n" });
    const result = await cliJson<AddFilesJson>(project, ["objects", "add", notes], { env: { SEMSEARCH_FILE_TIMEOUT: "2" } });
    expect(result.skipped).toEqual([{ path: "notes/bomb.md", reason: "reading it took more than 2 s of processor time (SEMSEARCH_FILE_TIMEOUT), so it was stopped", kind: "limit" }]);
    expect((await cliJson(project, ["objects", "list"])).objects.map((o: { id: string }) => o.id)).toEqual(["notes/fine.md"]);
  });

  it("the parse limit is processor time: a reading thread kept waiting (as on a loaded machine) past the limit on the clock still reads its file", async () => {
    const project = tempProject();
    const notes = path.join(path.dirname(project), "notes");
    writeTree(notes, { "api.md": "# fs\n\nFile system calls.\n" });
    // the read pauses 3 s without using the processor, three times its limit of 1 s
    const env = { SEMSEARCH_FAILPOINT: "files:read:pause", SEMSEARCH_FILE_TIMEOUT: "1" };
    const result = await cliJson<AddFilesJson>(project, ["objects", "add", notes], { env });
    expect([result.files.added, result.skipped]).toEqual([1, []]);
    expect((await cliJson(project, ["objects", "get", "notes/api.md"])).object.body).toBe("fs\n\nFile system calls.");
    // a read that waits ten times its limit on the clock (limit 0.1 s: 1 s) is stopped all the same
    writeFileSync(path.join(notes, "api.md"), "# fs\n\nChanged.\n");
    const stopped = await cliJson<AddFilesJson>(project, ["objects", "add", notes], { env: { ...env, SEMSEARCH_FILE_TIMEOUT: "0.1" } });
    expect(stopped.skipped).toEqual([{ path: "notes/api.md", reason: expect.stringMatching(/^reading it was not done after 1(\.\d)? s on the clock \(10 times SEMSEARCH_FILE_TIMEOUT\), so it was stopped$/), kind: "limit" }]);
  });

  it("an add that skipped files ends with one line on stderr saying how many and why, also in a pipe; --json gives each skip's kind", async () => {
    const project = tempProject();
    const notes = path.join(path.dirname(project), "notes");
    writeTree(notes, { "ok.md": "# Ok\n", "latin1.txt": Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]), "nul.txt": Buffer.from([0x61, 0, 0x62]), "big.md": "x".repeat(3000) });
    const human = await runCli(["--project", project, "objects", "add", notes, "--max-file-size", "2KB"]);
    expect(human.exitCode).toBe(0);
    expect(human.stdout).toContain("Skipped 3 files:\n  notes/big.md: 2.9 KiB is over the 2.0 KiB limit (--max-file-size)\n");
    expect(human.stderr).toBe("Skipped 3 files: 2 binary or not UTF-8, 1 over --max-file-size (each is listed with its reason in the output).\n");
    const json = await cliJson<AddFilesJson>(project, ["objects", "add", notes, "--max-file-size", "2KB"]);
    expect(json.skipped.map((skip) => [skip.path, skip.kind])).toEqual([
      ["notes/big.md", "size"],
      ["notes/latin1.txt", "encoding"],
      ["notes/nul.txt", "encoding"],
    ]);
  });

  it("a PDF is an object of its pages' text, whose page_starts tell a highlight's page", async () => {
    const project = tempProject();
    const docs = path.join(path.dirname(project), "docs");
    const pdf = await new Promise<Buffer>((resolve, reject) => {
      const doc = new PDFDocument({ autoFirstPage: false, info: { Title: "Field guide" } });
      const chunks: Buffer[] = [];
      doc.on("data", (chunk: Buffer) => chunks.push(chunk));
      doc.on("end", () => resolve(Buffer.concat(chunks)));
      doc.on("error", reject);
      doc.addPage().text("Herons wade in shallow water.");
      doc.addPage().text("Kingfishers dive for small fish.");
      doc.end();
    });
    writeTree(docs, { "guide.pdf": pdf });
    const { id } = await cliJson(project, ["index", "create", "--searchable", "title,body", "--highlights", "--wait"]);
    await cliJson(project, ["objects", "add", docs, "--wait"]);
    const object = (await cliJson(project, ["objects", "get", "docs/guide.pdf"])).object;
    expect(object).toMatchObject({ title: "Field guide", pages: 2, path: "docs/guide.pdf", ext: "pdf" });
    expect(object.body.slice(object.page_starts[1])).toBe("Kingfishers dive for small fish.");
    const page = await cliJson(project, ["search", id, "kingfishers", "--result-fields", "highlights", "--mode", "lexical"]);
    const highlight = page.results[0].highlights[0];
    expect(highlight.highlight.text).toBe("Kingfishers dive for small fish.");
    expect(highlight.references[0].position.start_char).toBeGreaterThanOrEqual(object.page_starts[1]); // page 2
  });
});
