/**
 * Segment delimiters are user regular expressions run by the worker over every object: they run on
 * RE2 (linear time), so a catastrophic-backtracking pattern cannot hold the worker. No timing
 * assertion: a hang would simply not complete, and vitest's timeout fails the test.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { cliJson, runCli, tempProject } from "../helpers/cli.js";

const project = tempProject();
let indexId = "";

const runs = (n: number) => `${"a".repeat(n)}!`;
const objects = [
  { id: "runs-30", body: runs(30) },
  { id: "runs-38", body: runs(38) },
  { id: "many-runs", body: Array.from({ length: 200 }, (_, i) => runs(30 + (i % 20))).join(" ") },
  { id: "split", body: "first part aaab second part aab third part" },
];

beforeAll(async () => {
  await cliJson(project, ["objects", "add", "-"], { input: objects.map((o) => JSON.stringify(o)).join("\n") });
  indexId = (await cliJson(project, ["index", "create", "--highlights", "--segment-delimiter", "body=(a+)+b"])).id;
});

describe("a segment delimiter with catastrophic backtracking in JavaScript, (a+)+b", () => {
  it("index status --wait finishes READY, with no ERROR", async () => {
    const status = await cliJson(project, ["index", "status", indexId, "--wait"]);
    expect(status.status).toEqual({ UPLOADED: 0, PROCESSING: 0, READY: objects.length, ERROR: 0 });
  });

  it("objects added later are indexed too", async () => {
    await cliJson(project, ["objects", "add", "-", "--wait"], { input: JSON.stringify({ id: "later", body: runs(45) }) });
    const info = await cliJson(project, ["objects", "get", "later"]);
    expect(info.status.indexes).toMatchObject([{ id: indexId, status: "READY", searchable: true }]);
  });

  it("segments start at its matches: highlights run from a segment's start to a segment's end", async () => {
    const body = (objects[3] as { body: string }).body;
    const segments = ["first part", "second part", "third part"];
    const response = await cliJson(project, ["search", indexId, "second part", "--result-fields", "highlights", "--object-fields", "*"]);
    const split = response.results.find((r: { id: string }) => r.id === "split");
    expect(split.highlights.length).toBeGreaterThan(0);
    for (const h of split.highlights) {
      const { start_char, end_char } = h.references[0].position;
      expect(h.highlight.text).toBe(body.slice(start_char, end_char));
      expect(segments.some((segment) => h.highlight.text.startsWith(segment))).toBe(true);
      expect(segments.some((segment) => h.highlight.text.endsWith(segment))).toBe(true);
    }
  });
});

describe("delimiters RE2 cannot run, or too large, are refused at index create", () => {
  it.each([
    ["a lookahead", "body=a(?=b)", "no lookarounds or backreferences"],
    ["a lookbehind", "body=(?<!x)y", "no lookarounds or backreferences"],
    ["a backreference", "body=(a)\\1", "no lookarounds or backreferences"],
    ["a nested repetition", "body=a{1000}{1000}", "invalid nested repetition operator"],
    ["a program over the size limit", "body=[^z]{0,1000}z", "too complex"],
    ["a pattern over 1,000 characters", `body=${"x".repeat(1001)}`, "at most 1000"],
  ])("%s exits 4 naming the field and why", async (_case, flag, why) => {
    const result = await runCli(["--project", project, "--json", "index", "create", "--highlights", "--segment-delimiter", flag]);
    expect(result.exitCode, result.stderr).toBe(4);
    expect(result.stdout).toBe("");
    const error = JSON.parse(result.stderr).errors[0];
    expect(error.code).toBe("INVALID_CONFIG");
    expect(error.message).toContain("configuration.fields.segment_delimiter.body: invalid regular expression");
    expect(error.message).toContain(why);
  });
});
