/**
 * Accented words through real searches, in process (issue 40, items 3 and 4): typos of 2 edits after
 * an accented first letter, and text written with composed accents (NFC, as typed) or decomposed
 * ones (NFD, as macOS file names hold and paste) found alike, in queries, stored text, highlights
 * and filters; the stored object comes back as given. An index created before semsearch normalized
 * text is searched as before, and says so when the query is decomposed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { tempProject } from "../helpers/cli.js";
import { addObjects, ok, search, waitBuilt, withEngine } from "../helpers/in-process.js";

const nfd = (text: string) => text.normalize("NFD");

const objects = [
  { id: "stage", title: "Éclairage", body: "Éclairage de la scène. Die Überraschung des Abends.", city: "Orléans" },
  // every value decomposed, as a macOS file name or a paste from one
  { id: "lake", title: nfd("Zürichsee"), body: nfd("Ein Tag am Zürichsee. Schöne Grüße aus Zürich, sagte der Bürgermeister."), city: nfd("Zürich") },
  { id: "bridge", title: "Bridge", body: "The collapsed bridge over the river.", city: "London" },
];

const configuration = {
  index_type: { name: "text", highlights: { text: true } },
  fields: { searchable: { allow: ["title", "body"] }, filterable: { allow: ["city"] } },
};

const project = tempProject();
let index = "";

beforeAll(async () => {
  index = await ok(project, async (engine) => {
    await addObjects(engine, objects.map((object) => JSON.stringify(object)).join("\n"));
    const { id } = await engine.createIndex({ configuration });
    await waitBuilt(engine, id);
    return id;
  });
});

/** The ids a lexical search finds. */
const lexical = (query: string, filter?: string) =>
  ok(project, async (engine) => (await search(engine, index, query, { mode: "lexical", ...(filter ? { filter } : {}) })).hits.map((hit) => hit.id));

describe("typos after a first letter that is not ASCII", () => {
  it("are tolerated within 2 edits from 9 letters, as after an ASCII one (LanceDB's fuzzy words are not folded: the accent cost an edit)", async () => {
    expect(await lexical("éclairgae")).toEqual(["stage"]);
    expect(await lexical("überraschugn")).toEqual(["stage"]);
    // as they were without the accent
    expect(await lexical("eclairgae")).toEqual(["stage"]);
    expect(await lexical("collapsde")).toEqual(["bridge"]);
  });
});

describe("composed and decomposed accents", () => {
  it("a decomposed query finds composed text, a composed query decomposed text", async () => {
    expect(await lexical(nfd("éclairage"))).toEqual(["stage"]);
    expect(await lexical(nfd("Überraschung"))).toEqual(["stage"]);
    expect(await lexical("bürgermeister")).toEqual(["lake"]);
    expect(await lexical("Zürich")).toEqual(["lake"]);
    expect(await lexical(nfd("Zürich"))).toEqual(["lake"]);
    // hybrid too: the lexical part is what finds the word
    const hybrid = await ok(project, (engine) => search(engine, index, nfd("Grüße")));
    expect(hybrid.hits[0]?.id).toBe("lake");
  });

  it("typos after a decomposed accent are tolerated, in the query or in the stored text", async () => {
    // (`zürihcsee`: 2 edits from `Zürichsee`, 9 letters)
    expect(await lexical(nfd("zürihcsee"))).toEqual(["lake"]);
    expect(await lexical("zürihcsee")).toEqual(["lake"]);
    expect(await lexical(nfd("éclairgae"))).toEqual(["stage"]);
  });

  it("highlights of decomposed text are at its own offsets, their text cut from the object as stored", async () => {
    const page = await ok(project, (engine) => search(engine, index, "bürgermeister", { mode: "lexical", resultFields: "highlights", objectFields: "*" }));
    const [hit] = page.hits;
    expect(hit?.id).toBe("lake");
    const body = (objects[1] as { body: string }).body;
    const sentence = nfd("Schöne Grüße aus Zürich, sagte der Bürgermeister.");
    // (decomposed, it starts one code unit later than composed, after the `u` and accent of `Zürichsee`)
    const start = body.indexOf(sentence);
    expect(start).toBe(body.normalize("NFC").indexOf(sentence.normalize("NFC")) + 1);
    expect(hit?.highlights).toEqual([{ highlight_type: "text", references: [{ source: "body", position: { start_char: start, end_char: start + sentence.length } }], highlight: { text: sentence } }]);
    expect(sentence.length).toBe(sentence.normalize("NFC").length + 4);
    expect(hit?.object).toEqual(objects[1]);
  });

  it("filters compare string values in either form", async () => {
    const vector = (filter: string) => ok(project, async (engine) => (await search(engine, index, "a day out", { mode: "vector", filter })).hits.map((hit) => hit.id));
    expect(await vector('city:"Zürich"')).toEqual(["lake"]);
    expect(await vector(`city:"${nfd("Zürich")}"`)).toEqual(["lake"]);
    expect(await vector(`city:${nfd("Orléans")}`)).toEqual(["stage"]);
    expect(await vector(`city:[${nfd("Orléans")} TO Orléans]`)).toEqual(["stage"]);
    // deleting by filter reads it alike
    expect(await ok(project, (engine) => engine.objectsMatching(index, 'city:"Zürich"'))).toEqual(["lake"]);
  });

  it("the stored object comes back as given, decomposed, and the index records its normalization", async () => {
    const stored = await ok(project, (engine) => engine.getObject("lake"));
    expect(stored.object).toEqual(objects[1]);
    expect(stored.object.body).not.toBe((objects[1]?.body as string).normalize("NFC"));
    expect((await ok(project, (engine) => engine.getIndex(index))).normalization).toBe("NFC");
  });
});

describe("an index created before text was normalized", () => {
  it("holds and searches text as given, and a decomposed query says so", async () => {
    const old = tempProject();
    const id = await ok(old, async (engine) => (await engine.createIndex({ configuration })).id);
    // As an index created before: its catalog entry without `normalization`.
    const catalogFile = path.join(old, "catalog.json");
    const catalog = JSON.parse(readFileSync(catalogFile, "utf8")) as { indexes: Record<string, unknown>[] };
    expect(catalog.indexes[0]?.normalization).toBe("NFC");
    delete catalog.indexes[0]?.normalization;
    writeFileSync(catalogFile, JSON.stringify(catalog));
    await ok(old, async (engine) => {
      await addObjects(engine, objects.map((object) => JSON.stringify(object)).join("\n"));
      await waitBuilt(engine, id);
    });
    const { result: page } = await withEngine(old, (engine) => search(engine, id, nfd("Zürich"), { mode: "lexical" }));
    // as before: the decomposed query finds the decomposed text (and nothing composed), and says why
    expect(page.hits.map((hit) => hit.id)).toEqual(["lake"]);
    expect(page.warnings?.map((warning) => warning.code)).toEqual(["TEXT_NOT_NORMALIZED"]);
    expect(page.warnings?.[0]?.message).toContain(`index ${id} was created before`);
    const composed = await ok(old, (engine) => search(engine, id, "Orléans scène", { mode: "lexical" }));
    expect(composed.hits.map((hit) => hit.id)).toEqual(["stage"]);
    expect(composed.warnings).toBeUndefined();
  });
});
