import { existsSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cliJson, runCli, tempProject, type CliResult } from "../helpers/cli.js";

const project = tempProject();
let indexId = "";
let neuralId = "";

beforeAll(async () => {
  await cliJson(project, ["objects", "add", "-"], { input: '{"id":"a","title":"alpha"}\n{"id":"b","title":"beta"}\n' });
  indexId = (await cliJson(project, ["index", "create", "--wait"])).id;
  neuralId = (await cliJson(project, ["index", "create", "--neural-only", "--wait"])).id;
});

function run(args: string[], input?: string): Promise<CliResult> {
  return runCli(["--project", project, ...args], { input });
}

/** Asserts the exit code and the JSON error document on stderr; stdout stays empty. */
async function expectJsonError(args: string[], exitCode: number, code: string, message: RegExp, input?: string) {
  const result = await run(["--json", ...args], input);
  expect(result.exitCode, result.stderr).toBe(exitCode);
  expect(result.stdout).toBe("");
  const body = JSON.parse(result.stderr);
  expect(body.errors).toHaveLength(1);
  expect(body.errors[0].code).toBe(code);
  expect(body.errors[0].message).toMatch(message);
  return body.errors[0];
}

describe("exit codes and error documents", () => {
  it.each([
    [["search", "idx_missing", "q"], 3, "INDEX_NOT_FOUND", /Index "idx_missing" not found/],
    [["objects", "get", "zzz"], 3, "OBJECT_NOT_FOUND", /Object "zzz" not found/],
    [["objects", "delete", "zzz"], 3, "OBJECT_NOT_FOUND", /zzz/],
    [["index", "create", "--type", "video"], 3, "INVALID_INDEX_TYPE", /Invalid index type "video"/],
    [["index", "create", "--field-type", "price=money"], 4, "INVALID_CONFIG", /configuration\.fields\.types\.price: unsupported field type "money"/],
    [["index", "create", "--segment-delimiter", "body=(unclosed"], 4, "INVALID_CONFIG", /segment_delimiter\.body: invalid regular expression/],
    [["index", "create", "--model", "gpt-99"], 4, "UNKNOWN_MODEL", /Unknown embedding model "gpt-99"/],
    [["index", "create", "--type", "image", "--model", "use"], 4, "MODEL_UNSUPPORTED", /Image indexes need an image-text \(CLIP\) model/],
    [["search", "IDX", "q", "--limit", "1001"], 4, "INVALID_PARAMETER", /limit must be an integer from 1 to 1,000/],
    [["search", "IDX", "q", "--offset", "10000"], 4, "INVALID_PARAMETER", /offset must be an integer from 0 to 9,999/],
    [["search", "IDX", "q", "--result-fields", "scores"], 4, "INVALID_PARAMETER", /Unknown result field "scores"/],
    [["search", "IDX", "--limit", "0", "q"], 4, "INVALID_PARAMETER", /limit/],
    [["search", "NEURAL", "q", "--mode", "lexical"], 4, "INVALID_PARAMETER", /neural-only: it has no lexical part/],
    [["search", "IDX", "q", "--mode", "fuzzy"], 2, "USAGE", /--mode/],
    [["search", "IDX", "q", "--limit", "x"], 2, "USAGE", /--limit/],
    [["search", "IDX", "q", "--page", "2", "--offset", "3"], 2, "CONFLICTING_OPTIONS", /--page or --offset/],
    [["index", "create", "--bogus"], 2, "USAGE", /unknown option '--bogus'/i],
    [["frobnicate"], 2, "USAGE", /unknown command/i],
    [["objects", "add", "does-not-exist.json"], 2, "INPUT_NOT_READABLE", /does-not-exist\.json: no such file/],
    // numeric flags, one rule: not a whole number is a usage error (2), a number out of range a validation error (4)
    [["objects", "list", "--limit", "0"], 4, "INVALID_PARAMETER", /limit must be an integer from 1 to 10,000, got 0/],
    [["objects", "list", "--limit", "10001"], 4, "INVALID_PARAMETER", /limit must be an integer from 1 to 10,000/],
    [["objects", "list", "--offset", "-1"], 4, "INVALID_PARAMETER", /offset must be an integer from 0/],
    [["objects", "list", "--limit", "abc"], 2, "USAGE", /--limit.*expected a whole number, got "abc"/],
    [["objects", "list", "--limit", "1.5"], 2, "USAGE", /--limit.*expected a whole number/],
    [["objects", "add", "-"], 4, "INVALID_INPUT", /^<stdin>:1: invalid JSON \(Unexpected non-whitespace character after JSON\)$/, '{"id":"w1"} {"id":"w2"}'],
    [["search", "IDX", "q", "--page", "0"], 4, "INVALID_PARAMETER", /page must be an integer from 1/],
    [["search", "IDX", "q", "--page", "-3"], 4, "INVALID_PARAMETER", /page must be an integer from 1/],
    [["search", "IDX", "q", "--page", "1001"], 4, "INVALID_PARAMETER", /page must be an integer from 1 to 1,000, got 1001/],
    [["search", "IDX", "q", "--page", "two"], 2, "USAGE", /--page.*expected a whole number/],
    [["search", "IDX", "q", "--limit", "-5"], 4, "INVALID_PARAMETER", /limit must be an integer from 1 to 1,000/],
    [["search", "IDX", "q", "--offset", "99999999999999999999"], 4, "INVALID_PARAMETER", /offset must be an integer from 0 to 9,999/],
  ] as [string[], number, string, RegExp, string?][])("%j exits %i with %s", async (args, exitCode, code, message, input) => {
    await expectJsonError(args.map((arg) => (arg === "IDX" ? indexId : arg === "NEURAL" ? neuralId : arg)), exitCode, code, message, input);
  });

  it("validates a --config body: unknown keys, wrong types, malformed JSON with its line", async () => {
    const issue = await expectJsonError(["index", "create", "--config", "-"], 4, "INVALID_CONFIG", /unknown key "colour"/, '{"configuration":{"index_type":{"name":"text"},"colour":"red"}}');
    expect(issue.issues[0]).toEqual({ path: "configuration", message: 'unknown key "colour"' });
    await expectJsonError(["index", "create", "--config", "-"], 4, "INVALID_CONFIG", /highlights\.text: expected boolean/, '{"configuration":{"index_type":{"name":"text","highlights":{"text":"yes"}}}}');
    await expectJsonError(["index", "create", "--config", "-"], 4, "INVALID_JSON", /^<stdin>:3: invalid JSON/, '{\n "configuration": {\n  "index_type": }\n}');
    await expectJsonError(["index", "create", "--config", "-", "--highlights"], 2, "CONFLICTING_OPTIONS", /either with --config or with flags/, "{}");
  });

  it("an empty --project or SEMSEARCH_PROJECT is refused (exit 2), not read as the working directory", async () => {
    const cwd = path.dirname(project);
    for (const [args, env] of [[["--project", ""], {}], [[], { SEMSEARCH_PROJECT: "" }], [[], { SEMSEARCH_PROJECT: "  " }]] as const) {
      const result = await runCli([...args, "--json", "objects", "add", "-"], { cwd, env, input: '{"id":"x"}' });
      expect(result.exitCode, result.stderr).toBe(2);
      expect(JSON.parse(result.stderr).errors[0].code).toBe("EMPTY_PROJECT");
      expect(existsSync(path.join(cwd, "catalog.json"))).toBe(false);
    }
  });

  // `--project s3://bucket/x` was read as a relative path: every command made a local folder `s3:`.
  it("a bucket semsearch cannot use, or cannot reach, is refused before anything is written, for commands, the reader and serve; near misses are usage errors", async () => {
    const cwd = mkdtempSync(path.join(path.dirname(project), "cwd-"));
    // (no credentials anywhere: not the tests' S3 server's, not a cloud machine's)
    const noCredentials = { AWS_ACCESS_KEY_ID: undefined, AWS_SECRET_ACCESS_KEY: undefined, AWS_SESSION_TOKEN: undefined, AWS_PROFILE: undefined, AWS_EC2_METADATA_DISABLED: "true", HOME: cwd };
    const cases: [string[], Record<string, string | undefined>, string, number][] = [
      [["--project", "gs://bucket/x", "--json", "objects", "add", "-"], {}, "REMOTE_PROJECT_UNSUPPORTED", 2],
      [["--json", "search", "idx_a", "q"], { SEMSEARCH_PROJECT: "az://bucket/x" }, "REMOTE_PROJECT_UNSUPPORTED", 2],
      [["--project", "gs://bucket/x", "--json", "serve", "--no-auth", "--port", "0"], {}, "REMOTE_PROJECT_UNSUPPORTED", 2],
      [["--project", "s3://bucket/x", "--json", "objects", "add", "-"], noCredentials, "S3_NO_CREDENTIALS", 6],
      [["--project", "s3:/bucket/x", "--json", "objects", "add", "-"], {}, "INVALID_PROJECT", 2],
      [["--project", "S3://bucket/x", "--json", "index", "list"], {}, "INVALID_PROJECT", 2],
    ];
    for (const [args, env, code, exitCode] of cases) {
      const result = await runCli(args, { cwd, env, input: '{"id":"x"}' });
      expect(result.exitCode, `${args.join(" ")}: ${result.stderr}`).toBe(exitCode);
      expect(JSON.parse(result.stderr).errors[0].code).toBe(code);
      expect(readdirSync(cwd), args.join(" ")).toEqual([]);
    }
  });

  it("prints one readable line without a stack trace when not --json", async () => {
    const result = await run(["search", "idx_missing", "q"]);
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toBe("");
    expect(result.stderr.split("\n")[0]).toBe('error: Index "idx_missing" not found');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it("prints help and exits 0 for --help", async () => {
    const result = await run(["search", "--help"]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain("--object-fields");
  });
});

describe("objects add writes nothing from a malformed input", () => {
  it("names the file and line of the bad line, and stores none of the good ones", async () => {
    const file = path.join(path.dirname(project), "bad.jsonl");
    writeFileSync(file, '{"id":"n1","title":"new one"}\n{"id":"n2","title":"new two"}\n{"id":"n3", title: oops}\n');
    const result = await run(["objects", "add", file]);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain(`${file}:3: invalid JSON`);
    const { objects } = await cliJson(project, ["objects", "list"]);
    expect(objects.map((o: { id: string }) => o.id)).toEqual(["a", "b"]);
  });

  it("rejects an invalid id naming its place, writing nothing from any of the files", async () => {
    const good = path.join(path.dirname(project), "good.json");
    const bad = path.join(path.dirname(project), "bad-id.json");
    writeFileSync(good, '[{"id":"g1"}]');
    writeFileSync(bad, '[\n  {"id":"x"},\n  {"id": true}\n]');
    await expectJsonError(["objects", "add", good, bad], 4, "INVALID_INPUT", new RegExp(`bad-id\\.json:3: field "id" must be`));
    expect((await cliJson(project, ["objects", "list"])).objects).toHaveLength(2);
  });

  it("an empty pipe adds nothing and succeeds", async () => {
    const result = await cliJson(project, ["objects", "add"]);
    expect(result).toEqual({ count: 0, ids: [] });
  });
});

describe("behaviour the spec leaves open", () => {
  it("a repeated id within one objects add keeps the last one", async () => {
    const result = await cliJson(project, ["objects", "add", "-"], { input: '{"id":"dup","v":1}\n{"id":"dup","v":2}\n' });
    expect(result).toEqual({ count: 1, ids: ["dup"] });
    expect((await cliJson(project, ["objects", "get", "dup"])).object).toEqual({ id: "dup", v: 2 });
    await cliJson(project, ["objects", "delete", "dup"]);
  });

  it("an object without an id gets a generated one, not written into the object (said on stderr)", async () => {
    const added = await runCli(["--project", project, "--json", "objects", "add", "-"], { input: '{"title":"anonymous"}' });
    expect(added.exitCode, added.stderr).toBe(0);
    expect(JSON.parse(added.stderr).warnings[0].code).toBe("IDS_GENERATED");
    const { ids } = JSON.parse(added.stdout);
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect((await cliJson(project, ["objects", "get", ids[0]])).object).toEqual({ title: "anonymous" });
    await cliJson(project, ["objects", "delete", ids[0]]);
  });

  it("reading commands on a missing project see an empty one and create nothing", async () => {
    const missing = tempProject();
    expect(await cliJson(missing, ["index", "list"])).toEqual({ indexes: [] });
    expect(await cliJson(missing, ["objects", "list"])).toEqual({ objects: [] });
    expect((await runCli(["--project", missing, "search", "idx_x", "q"])).exitCode).toBe(3);
    expect(existsSync(missing)).toBe(false);
  });
});
