/**
 * Field names and ids that are members of Object.prototype (`constructor`, `toString`, `__proto__`…)
 * are names like any other, through the built CLI: index creation, the worker, filters, highlights,
 * object fields and --id-field. Every command must exit 0 with the results computed here.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { cliJson, runCli, tempProject } from "../helpers/cli.js";

const HOSTILE = ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf", "prototype", "__defineGetter__"];

/** An object from entries: `__proto__` becomes an own key (as JSON.parse makes it), never the prototype. */
const object = (entries: [string, unknown][]) => Object.fromEntries(entries) as Record<string, unknown>;
const jsonLines = (objects: Record<string, unknown>[]) => objects.map((o) => JSON.stringify(o)).join("\n");
const own = (o: Record<string, unknown>, key: string) => (Object.hasOwn(o, key) ? o[key] : undefined);

const objects = [
  object([
    ["id", "volcano"],
    ["constructor", "2.5"],
    ["toString", "Lava flows downhill; ash clouds rise high; the crater glows red"],
    ["__proto__", "Volcanoes form where tectonic plates meet."],
    ["hasOwnProperty", "The observatory owns three seismometers."],
    ["valueOf", 7],
    ["prototype", "An early model of the eruption."],
    ["__defineGetter__", "getter text"],
  ]),
  object([
    ["id", "bakery"],
    ["constructor", "0.5"],
    ["toString", "Knead the dough; let it rise overnight; bake at dawn"],
    ["__proto__", { nested: "a nested object under __proto__" }],
    ["valueOf", "cheap"],
  ]),
  object([
    ["id", "garden"],
    ["constructor", 12],
    ["toString", "Water the roses; prune the hedges"],
    ["prototype", "Seedlings in the greenhouse."],
  ]),
  // ids that are prototype members
  object([
    ["id", "__proto__"],
    ["constructor", "3"],
    ["toString", "An object whose id is __proto__; it is stored and found"],
  ]),
  object([
    ["id", "constructor"],
    ["constructor", "-1"],
    ["toString", "An object whose id is constructor; also stored"],
  ]),
  object([["id", "plain"], ["title", "No hostile fields at all"]]),
];

const project = tempProject();
let indexId = "";
let plainIndexId = "";

interface Result {
  id: string;
  object: Record<string, unknown>;
  highlights?: { references: { source: string; position: { start_char: number; end_char: number } }[]; highlight: { text: string } }[];
}
interface Response {
  results: Result[];
}

async function search(index: string, query: string, ...flags: string[]): Promise<Response> {
  return cliJson<Response>(project, ["search", index, query, "--limit", "100", ...flags]);
}

beforeAll(async () => {
  await cliJson(project, ["objects", "add", "-"], { input: jsonLines(objects) });
  const created = await runCli([
    "--project", project, "--json", "index", "create", "--highlights",
    "--field-type", "constructor=float",
    "--segment-delimiter", "toString=;",
    "--searchable", HOSTILE.join(","),
  ]);
  expect(created.exitCode, created.stderr).toBe(0);
  indexId = JSON.parse(created.stdout).id;
  plainIndexId = (await cliJson(project, ["index", "create"])).id;
});

describe("field names that are Object.prototype members", () => {
  it("index creation keeps them in the configuration", async () => {
    const info = await cliJson(project, ["index", "get", indexId]);
    const fields = info.configuration.fields;
    expect(own(fields.types, "constructor")).toBe("float");
    expect(own(fields.segment_delimiter, "toString")).toBe(";");
    expect(fields.searchable.allow).toEqual(HOSTILE);
  });

  it("index status --wait reaches READY for every object, with no ERROR", async () => {
    for (const id of [indexId, plainIndexId]) {
      const status = await cliJson(project, ["index", "status", id, "--wait"]);
      expect(status.status).toEqual({ UPLOADED: 0, PROCESSING: 0, READY: objects.length, ERROR: 0 });
    }
  });

  it("filters on a declared field named constructor", async () => {
    const expected = objects.filter((o) => own(o, "constructor") !== undefined && Number(own(o, "constructor")) > 1).map((o) => o.id);
    expect(expected.sort()).toEqual(["__proto__", "garden", "volcano"]);
    const response = await search(indexId, "lava roses bread", "--filter", "constructor:>1", "--object-fields", "constructor");
    expect(response.results.map((r) => r.id).sort()).toEqual(expected.sort());
    for (const r of response.results) expect(Number(own(r.object, "constructor"))).toBeGreaterThan(1);
  });

  it("filters on discovered fields named toString and valueOf, declared types elsewhere or not", async () => {
    const lava = await search(indexId, "lava", "--filter", `toString:"${String(own(objects[0] as Record<string, unknown>, "toString"))}"`);
    expect(lava.results.map((r) => r.id)).toEqual(["volcano"]);
    const cheap = await search(plainIndexId, "dough", "--filter", "valueOf:cheap OR constructor:*");
    const expected = objects.filter((o) => own(o, "valueOf") === "cheap" || own(o, "constructor") !== undefined).map((o) => o.id);
    expect(cheap.results.map((r) => r.id).sort()).toEqual(expected.sort());
    const none = await search(indexId, "x", "--filter", "hasOwnProperty:nothing OR prototype:nothing OR __proto__:nothing OR __defineGetter__:nothing");
    expect(none.results).toEqual([]);
  });

  it("returns exactly the requested object fields, own keys only", async () => {
    const response = await search(indexId, "lava dough roses", "--object-fields", "constructor,toString,__proto__,valueOf");
    expect(response.results.length).toBe(objects.length);
    for (const r of response.results) {
      const source = objects.find((o) => o.id === r.id) as Record<string, unknown>;
      const expected = Object.fromEntries(["constructor", "toString", "__proto__", "valueOf"].filter((key) => Object.hasOwn(source, key)).map((key) => [key, source[key]]));
      expect(Object.entries(r.object)).toEqual(Object.entries(expected));
    }
  });

  it("the table view shows fields named constructor and toString, also for objects without them", async () => {
    const table = await runCli(["--project", project, "search", indexId, "lava dough roses", "--object-fields", "constructor,toString", "--limit", "20"]);
    expect(table.exitCode, table.stderr).toBe(0);
    expect(table.stderr).toBe("");
    expect(table.stdout).toMatch(/constructor/);
  });

  it("highlights fields named toString (split at its delimiter) and __proto__, each the exact slice", async () => {
    const response = await search(indexId, "ash clouds rise high", "--result-fields", "highlights", "--object-fields", "*");
    const volcano = response.results.find((r) => r.id === "volcano");
    expect(volcano?.highlights?.length).toBeGreaterThan(0);
    const segments = String(own(objects[0] as Record<string, unknown>, "toString")).split(";").map((part) => part.trim());
    for (const r of response.results) {
      for (const h of r.highlights ?? []) {
        const [ref] = h.references;
        const field = own(r.object, ref?.source as string);
        expect(typeof field).toBe("string");
        expect(h.highlight.text).toBe((field as string).slice(ref?.position.start_char, ref?.position.end_char));
      }
    }
    const best = volcano?.highlights?.find((h) => h.references[0]?.source === "toString");
    expect(segments).toContain(best?.highlight.text);
    const proto = await search(indexId, "tectonic plates meet", "--result-fields", "highlights");
    expect(proto.results[0]?.id).toBe("volcano");
    expect(proto.results[0]?.highlights?.map((h) => h.references[0]?.source)).toContain("__proto__");
  });

  it("objects whose id is __proto__ or constructor are stored, READY and found", async () => {
    for (const id of ["__proto__", "constructor"]) {
      const info = await cliJson(project, ["objects", "get", id]);
      expect(info.id).toBe(id);
      expect(info.object).toEqual(objects.find((o) => o.id === id));
      expect(info.status.indexes.map((i: { status: string }) => i.status)).toEqual(["READY", "READY"]);
    }
    const response = await search(indexId, "an object whose id is", "--filter", "id:__proto__ OR id:constructor");
    expect(response.results.map((r) => r.id).sort()).toEqual(["__proto__", "constructor"]);
  });

  it("objects add --id-field constructor reads the id from that field", async () => {
    const added = [object([["constructor", "from-constructor"], ["toString", "an id read from the constructor field"]]), object([["toString", "no constructor: a generated id"]])];
    // --wait exits 7: "from-constructor" cannot be read as the float the first index declares for "constructor"
    // (the second object has no "constructor": named with --id-field, that is refused unless --generate-ids)
    const refused = await runCli(["--project", project, "--json", "objects", "add", "-", "--id-field", "constructor"], { input: jsonLines(added) });
    expect(JSON.parse(refused.stderr).errors[0]).toMatchObject({ code: "MISSING_ID", message: '<stdin>:2: the object has no field "constructor", named as the id field' });
    const run = await runCli(["--project", project, "--json", "objects", "add", "-", "--id-field", "constructor", "--generate-ids", "--wait"], { input: jsonLines(added) });
    expect(run.exitCode, run.stderr).toBe(7);
    const result = JSON.parse(run.stdout);
    expect(result.count).toBe(2);
    expect(result.ids[0]).toBe("from-constructor");
    expect(result.ids[1]).not.toBe("from-constructor");
    const info = await cliJson(project, ["objects", "get", "from-constructor"]);
    expect(info.object).toEqual(added[0]);
    expect(info.status.indexes.map((i: { status: string }) => i.status)).toEqual(["ERROR", "READY"]);
    // "from-constructor" cannot be read as the float the first index declares: an ERROR there, named
    expect(info.status.indexes[0].error).toContain('field "constructor": expected a float');
    const status = await cliJson(project, ["index", "status", plainIndexId, "--wait"]);
    expect(status.status).toMatchObject({ READY: objects.length + 2, ERROR: 0 });
  });

  // The worker's per-object error record is prototype-free: an id `__proto__` is a key like any other.
  it("an object with id __proto__ whose declared value is unreadable is in ERROR", async () => {
    const added = await runCli(["--project", project, "--json", "objects", "add", "-", "--wait"], { input: JSON.stringify(object([["id", "__proto__"], ["constructor", "many"]])) });
    expect(added.exitCode, added.stderr).toBe(7); // --wait: an object could not be indexed
    expect(JSON.parse(added.stderr.split("\n")[0] as string).warnings[0].message).toContain('__proto__: field "constructor"');
    const info = await cliJson(project, ["objects", "get", "__proto__"]);
    expect(info.status.indexes[0].status).toBe("ERROR");
  });
});
