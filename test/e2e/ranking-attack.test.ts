/**
 * What an outside attack on the ranking features (issue 28) found, through the real CLI and server:
 * typo'd words whose first letter is not ASCII, and the text a semantic ratio may be written as.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliJson, runCli, tempProject } from "../helpers/cli.js";
import { call, serve, type Served } from "../helpers/serve.js";

interface Response {
  results: { id: string; explain?: { semantic_ratio?: number; ranking: string } }[];
}

const project = tempProject();
let index = "";
let server: Served | undefined;

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
  server = await serve(project, ["--no-auth"]);
});
afterAll(async () => {
  await server?.stop();
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

describe("semantic ratio text", () => {
  it("is read alike by the CLI and HTTP: any decimal the CLI takes, HTTP takes, with the same ratio", async () => {
    for (const text of ["0.", "1.", "-0", "00.5", ".5", "+0.25", "0.1234567890123456789", "1.0000000000000000001"]) {
      const cli = await runCli(["--project", project, "--json", "search", index, "bike", `--semantic-ratio=${text}`, "--result-fields", "explain"]);
      const http = await call(`${server?.url}/v1/indexes/${index}/search?query=bike&result_fields=explain&semantic_ratio=${encodeURIComponent(text)}`, null);
      expect([cli.exitCode, http.status], text).toEqual([0, 200]);
      expect(http.json.results, text).toEqual((JSON.parse(cli.stdout) as Response).results);
    }
    // not numbers: both refuse (exit 2; 422); out of range: the engine's 422 naming the range, both
    for (const text of ["1e-1", "0x1", "NaN", "Infinity", "."]) {
      const cli = await runCli(["--project", project, "search", index, "bike", `--semantic-ratio=${text}`]);
      const http = await call(`${server?.url}/v1/indexes/${index}/search?query=bike&semantic_ratio=${encodeURIComponent(text)}`, null);
      expect([cli.exitCode, http.status], text).toEqual([2, 422]);
    }
    const cli = await runCli(["--project", project, "--json", "search", index, "bike", "--semantic-ratio=1.5"]);
    const http = await call(`${server?.url}/v1/indexes/${index}/search?query=bike&semantic_ratio=1.5`, null);
    expect([cli.exitCode, http.status, http.json.errors[0].message]).toEqual([4, 422, JSON.parse(cli.stderr).errors[0].message]);
  });
});
