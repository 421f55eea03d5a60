/**
 * What an outside attack on the ranking features (issue 28) found, through the real CLI and server:
 * typo'd words whose first letter is not ASCII.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cliJson, runCli, tempProject } from "../helpers/cli.js";

interface Response {
  results: { id: string; explain?: { semantic_ratio?: number; ranking: string } }[];
}

const project = tempProject();
let index = "";

beforeAll(async () => {
  const file = path.join(path.dirname(project), "objects.jsonl");
  const objects = [
    { id: "ru", body: "Большое спасибо за помощь" },
    { id: "de", body: "Überraschung in der Straße" },
    { id: "en", body: "Bike chain lubricant for rainy rides" },
  ];
  writeFileSync(file, objects.map((object) => JSON.stringify(object)).join("\n"));
  await cliJson(project, ["objects", "add", file]);
  index = (await cliJson(project, ["index", "create", "--searchable", "body", "--wait"])).id;
});

describe("typos in words whose first letter is not ASCII", () => {
  it("are searched (LanceDB cut its fuzzy prefix inside the letter and panicked: exit 1), and corrected", async () => {
    // words of 5+ letters that match nothing, each starting with a letter of 2 or more UTF-8 bytes
    for (const query of ["éclairs", "überzeugend", "مرحبابكم", "ßtraßen", "ǅungla 日本語日本語"]) {
      const out = await runCli(["--project", project, "--json", "search", index, query, "--mode", "lexical"]);
      expect([out.exitCode, out.stderr], query).toEqual([0, ""]);
    }
    // "überraschng" is 1 edit from "überraschung" (11 letters: 2 allowed); only "de" has it
    const corrected = await cliJson<Response>(project, ["search", index, "überraschng", "--mode", "lexical"]);
    expect(corrected.results.map((result) => result.id)).toEqual(["de"]);
  });
});
