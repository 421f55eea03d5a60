/**
 * Create-index bodies (issue 40, item 12): a tokenizer language in any case, kept as LanceDB names
 * it; and the body's size limit, the same for the CLI's --config (exit 2 INPUT_TOO_LARGE) and HTTP
 * (413 BODY_TOO_LARGE), as the README's exit table and http-api.md say.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cliJson, runCli, tempProject } from "../helpers/cli.js";
import { addObjects, ok, search, waitBuilt } from "../helpers/in-process.js";
import { call, serve } from "../helpers/serve.js";

describe("tokenizer languages", () => {
  it("are taken in any case and stored as LanceDB names them (German), and the index builds and searches with them", async () => {
    const project = tempProject();
    await ok(project, (engine) => addObjects(engine, '{"id":"a","body":"Die Häuser sind alt"}\n{"id":"b","body":"Der Hund schläft"}\n'));
    const { id } = await ok(project, (engine) =>
      engine.createIndex({ configuration: { index_type: { name: "text" }, fields: { searchable: { allow: ["body"] } }, tokenizer: { language: "german" } } }),
    );
    const info = await ok(project, (engine) => waitBuilt(engine, id));
    expect([info.configuration.tokenizer?.language, info.tokenizer?.language]).toEqual(["German", "German"]);
    const page = await ok(project, (engine) => search(engine, id, "Hund", { mode: "lexical" }));
    expect(page.hits.map((hit) => hit.id)).toEqual(["b"]);
    for (const language of ["GERMAN", "gErMaN"]) {
      const other = await ok(project, (engine) => engine.createIndex({ configuration: { index_type: { name: "text" }, tokenizer: { language } } }));
      expect((await ok(project, (engine) => engine.getIndex(other.id))).tokenizer?.language).toBe("German");
    }
  });
});

describe("the create-index body's size", () => {
  /** A body of exactly `bytes` bytes: JSON, then spaces. */
  const body = (bytes: number) => {
    const json = JSON.stringify({ configuration: { index_type: { name: "text" } } });
    return json + " ".repeat(bytes - json.length);
  };

  it("is at most 1 MiB for both: one byte more is exit 2 INPUT_TOO_LARGE from --config and 413 BODY_TOO_LARGE over HTTP, and creates nothing", async () => {
    const project = tempProject();
    const config = path.join(path.dirname(project), "config.json");
    const server = await serve(project, ["--no-auth"]);
    try {
      writeFileSync(config, body(1024 * 1024 + 1));
      const cli = await runCli(["--project", project, "--json", "index", "create", "--config", config]);
      expect([cli.exitCode, cli.stdout], cli.stderr).toEqual([2, ""]);
      expect(JSON.parse(cli.stderr).errors[0]).toMatchObject({ code: "INPUT_TOO_LARGE", message: `--config ${config}: more than 1 MB` });
      const http = await call(`${server.url}/v1/indexes`, null, { method: "POST", headers: { "content-type": "application/json" }, body: body(1024 * 1024 + 1) });
      expect([http.status, http.json?.errors?.[0]?.code]).toEqual([413, "BODY_TOO_LARGE"]);
      expect((await cliJson(project, ["index", "list", "--in-process"])).indexes).toEqual([]);

      writeFileSync(config, body(1024 * 1024));
      expect(await cliJson(project, ["index", "create", "--config", config])).toEqual({ id: expect.stringMatching(/^idx_/) });
      const created = await call(`${server.url}/v1/indexes`, null, { method: "POST", headers: { "content-type": "application/json" }, body: body(1024 * 1024) });
      expect(created.status, created.text).toBe(202);
    } finally {
      await server.stop();
    }
  });
});
