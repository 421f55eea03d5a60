/** Files as objects (issue 29), through the real CLI: CSV and TSV rows as objects. */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cliJson, runCli, tempProject } from "../helpers/cli.js";

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
