import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliJson, runCli, tempProject } from "../helpers/cli.js";
import { serve, type Served } from "../helpers/serve.js";

const project = tempProject();
let server: Served | undefined;
let indexId = "";

const objects = [
  {
    id: "tea",
    title: "Green tea",
    body: "Green tea is made from unoxidised leaves. It contains caffeine and antioxidants.\nBrewing at 80 °C avoids bitterness. Steep it for 2.5 minutes.",
    notes: "First paragraph about harvest.\n\nSecond paragraph: the leaves are steamed or pan-fired to stop oxidation.",
    tags: ["tea", "leaves"],
  },
  {
    id: "cafe",
    title: "Café culture 😀",
    body: "Coffee houses spread across Europe in the 17th century. Nai\u0308ve visitors 👩‍👩‍👧 met there to read newspapers. Espresso bars came later.",
    notes: "Vienna's cafés are famous.\n\nThey serve a glass of water with every coffee.",
    meta: { city: "Vienna" },
  },
  {
    id: "bikes",
    title: "Bicycle maintenance",
    body: "Oil the chain every few hundred kilometres. Check tyre pressure weekly. Brake pads wear faster in the rain.",
    notes: "Keep a spare tube.\n\nA pump fits on the frame.",
  },
];

interface Highlight {
  highlight_type: string;
  references: { source: string; position: { start_char: number; end_char: number } }[];
  highlight: { text: string };
}
interface Response {
  results: { id: string; object: Record<string, unknown>; highlights?: Highlight[] }[];
  pagination: { statistics: { total: number } };
}

function expectExactSlices(response: Response) {
  let count = 0;
  for (const result of response.results) {
    for (const h of result.highlights ?? []) {
      count++;
      expect(Object.keys(h)).toEqual(["highlight_type", "references", "highlight"]);
      expect(h.highlight_type).toBe("text");
      const [ref] = h.references;
      expect(Object.keys(h.references[0] ?? {})).toEqual(["source", "position"]);
      const field = result.object[ref?.source as string] as string;
      expect(typeof field).toBe("string");
      expect(h.highlight.text).toBe(field.slice(ref?.position.start_char, ref?.position.end_char));
    }
  }
  expect(count).toBeLessThanOrEqual(250);
  return count;
}

beforeAll(async () => {
  await cliJson(project, ["objects", "add", "-"], { input: objects.map((o) => JSON.stringify(o)).join("\n") });
  indexId = (await cliJson(project, ["index", "create", "--highlights", "--segment-delimiter", "notes=\\n\\n", "--wait"])).id;
  // A server of the project answers the CLI's searches and reads warm (the same bytes as in the
  // CLI's own process, test/e2e/local-search.test.ts): each no longer loads the model.
  server = await serve(project, ["--no-auth"]);
});

afterAll(async () => {
  await server?.stop();
});

describe("text highlights", () => {
  it("returns highlights in the spec's exact shape, each the exact slice of its field", async () => {
    const response = await cliJson<Response>(project, ["search", indexId, "how hot should water be to brew tea", "--result-fields", "highlights", "--object-fields", "*"]);
    expect(response.results[0]?.id).toBe("tea");
    expect(expectExactSlices(response)).toBeGreaterThan(0);
    expect(response.results[0]?.highlights?.some((h) => /Brewing at 80 °C/.test(h.highlight.text))).toBe(true);
  });

  it("answers a query of quotes only (no lexical terms) from the vector part, with and without highlights", async () => {
    for (const query of ['"', '""', '" "']) {
      const vector = await cliJson<Response>(project, ["search", indexId, query, "--mode", "vector"]);
      expect(vector.results.length, query).toBeGreaterThan(0);
      expect((await cliJson<Response>(project, ["search", indexId, query])).results.map((r) => r.id), query).toEqual(vector.results.map((r) => r.id));
      const highlighted = await cliJson<Response>(project, ["search", indexId, query, "--result-fields", "highlights", "--object-fields", "*"]);
      expect(highlighted.results.length, query).toBeGreaterThan(0);
      expectExactSlices(highlighted);
    }
  });

  it("slices correctly around emoji and combining characters (UTF-16 offsets)", async () => {
    const response = await cliJson<Response>(project, ["search", indexId, "visitors met to read newspapers", "--result-fields", "highlights", "--object-fields", "*"]);
    expectExactSlices(response);
    const cafe = response.results.find((r) => r.id === "cafe");
    expect(cafe?.highlights?.some((h) => h.highlight.text.includes("👩‍👩‍👧"))).toBe(true);
  });

  it("segments by the field's delimiter: a notes paragraph is one segment", async () => {
    const response = await cliJson<Response>(project, ["search", indexId, "leaves steamed or pan-fired to stop oxidation", "--result-fields", "highlights", "--object-fields", "*"]);
    const notes = response.results[0]?.highlights?.find((h) => h.references[0]?.source === "notes");
    expect(notes?.highlight.text).toBe("Second paragraph: the leaves are steamed or pan-fired to stop oxidation.");
  });

  it("never highlights lists or nested objects", async () => {
    const response = await cliJson<Response>(project, ["search", indexId, "tea leaves Vienna", "--result-fields", "highlights", "--limit", "3"]);
    for (const result of response.results) for (const h of result.highlights ?? []) expect(["title", "body", "notes"]).toContain(h.references[0]?.source);
  });

  it("has no highlights key unless asked", async () => {
    const response = await cliJson<Response>(project, ["search", indexId, "coffee"]);
    expect(response.results[0]).not.toHaveProperty("highlights");
  });

  it("shows the best highlight in the table", async () => {
    const result = await runCli(["--project", project, "search", indexId, "tyre pressure", "--result-fields", "highlights"]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.split("\n")[0]?.split("\t")[3]).toBe("highlight"); // (in a pipe: tab-separated values)
    expect(result.stdout).toContain("Check tyre pressure weekly.");
    expect(result.stdout).not.toMatch(/\x1b\[/);
  });

  it("leaves no stale highlights after an object is replaced or deleted", async () => {
    const replaced = { id: "bikes", title: "Bicycle maintenance", body: "Clean the drivetrain monthly. Replace the chain when it stretches." };
    await cliJson(project, ["objects", "add", "-", "--wait"], { input: JSON.stringify(replaced) });
    const response = await cliJson<Response>(project, ["search", indexId, "tyre pressure brake pads", "--result-fields", "highlights", "--object-fields", "*"]);
    expectExactSlices(response);
    const bikes = response.results.find((r) => r.id === "bikes");
    for (const h of bikes?.highlights ?? []) expect(h.highlight.text).not.toMatch(/tyre|Brake/);
    await cliJson(project, ["objects", "delete", "cafe"]);
    const after = await cliJson<Response>(project, ["search", indexId, "coffee houses espresso", "--result-fields", "highlights"]);
    expect(after.results.map((r) => r.id)).not.toContain("cafe");
  });
});

describe("a sentence longer than the model's input", () => {
  // One sentence of about 2,400 characters (no full stop inside, no newline): mostly about the harbour,
  // the lighthouse keeper only at its end. It is one segment (§2.4.4), embedded in windows as a whole
  // object is (the bundled model's are 2,000 characters: two here), so a highlight of it is the whole
  // sentence, never a piece starting mid-sentence.
  const harbour = "the fishing boats came home to the quiet harbour in the evening, nets heavy and gulls loud over the slipway, ".repeat(21);
  const long = `On a grey autumn day ${harbour}while up on the cliff the old lighthouse keeper polished the great brass lens and wound the clockwork of the foghorn before the storm.`;
  const segments = ["Notes from the coast.", long, "Tea was served at five."];
  const body = segments.join(" ");
  const starts = segments.map((segment) => body.indexOf(segment));
  const ends = segments.map((segment, i) => (starts[i] as number) + segment.length);
  const project = tempProject();
  let id = "";

  beforeAll(async () => {
    expect(long.length).toBeGreaterThan(2000);
    expect(long).not.toMatch(/\.\s|\n/);
    await cliJson(project, ["objects", "add", "-"], { input: [{ id: "coast", body }, ...objects].map((o) => JSON.stringify(o)).join("\n") });
    id = (await cliJson(project, ["index", "create", "--highlights", "--wait"])).id;
  });

  it("highlights the whole sentence: the highlight starts where the sentence starts and covers it", async () => {
    const response = await cliJson<Response>(project, ["search", id, "lighthouse keeper polished the brass lens foghorn", "--result-fields", "highlights", "--object-fields", "*"]);
    expectExactSlices(response);
    const coast = response.results.find((r) => r.id === "coast");
    const spans = (coast?.highlights ?? []).map((h) => h.references[0]?.position as { start_char: number; end_char: number });
    expect(spans.length).toBeGreaterThan(0);
    // Every highlight is made of whole segments: it starts at a segment's start and ends at a segment's end.
    for (const span of spans) {
      expect(starts).toContain(span.start_char);
      expect(ends).toContain(span.end_char);
    }
    const start = starts[1] as number;
    const end = ends[1] as number;
    expect(spans.some((span) => span.start_char <= start && span.end_char >= end)).toBe(true);
  });
});
