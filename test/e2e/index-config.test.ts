/** Create-index bodies (issue 40, item 12): a tokenizer language in any case, kept as LanceDB names it. */
import { describe, expect, it } from "vitest";
import { tempProject } from "../helpers/cli.js";
import { addObjects, ok, search, waitBuilt } from "../helpers/in-process.js";

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
