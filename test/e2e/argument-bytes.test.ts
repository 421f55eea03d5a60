/**
 * Ids given as bytes that are not UTF-8 (issue 40, item 1), through the built CLI: the bytes of the
 * command line and of standard input are the subject. Node reads argv's bytes as UTF-8, putting
 * U+FFFD where they are not; `objects delete $'keep\xff'` deleted the stored object `keep\uFFFD`.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { cliJson, runCli, tempProject, type CliResult } from "../helpers/cli.js";
import { call, serve } from "../helpers/serve.js";

const REPLACED = "keep\uFFFD"; // an id that may legitimately be stored (JSON's "\ufffd")
const ids = ["keep", REPLACED, "other"];
const keepFF = Buffer.from([...Buffer.from("keep"), 0xff]);

let project = "";

beforeEach(async () => {
  project = tempProject();
  await cliJson(project, ["objects", "add", "-"], { input: ids.map((id) => JSON.stringify({ id, title: `object ${id}` })).join("\n") });
});

async function stored(): Promise<string[]> {
  return (await cliJson<{ objects: { id: string }[] }>(project, ["objects", "list"])).objects.map((object) => object.id).sort();
}

/** The one `{"errors":[…]}` document of a failed `--json` command, with its exit code; stdout must be empty. */
function refusal(result: CliResult) {
  expect(result.stdout, result.stderr).toBe("");
  const [error] = (JSON.parse(result.stderr) as { errors: { code: string; message: string }[] }).errors;
  return { exitCode: result.exitCode, code: error?.code, message: error?.message };
}

describe("ids on the command line", () => {
  it("objects delete refuses an id whose bytes are not UTF-8 (exit 4) and deletes nothing", async () => {
    const result = await runCli(["--project", project, "--json", "objects", "delete", keepFF]);
    expect(refusal(result)).toEqual({
      exitCode: 4,
      code: "ARGUMENT_NOT_UTF8",
      message: 'objects delete <ids> "keep\\ufffd" holds U+FFFD at character 5: bytes that are not UTF-8 become U+FFFD on a command line, so it may not be what was typed',
    });
    expect(await stored()).toEqual([...ids].sort());
  });

  it("objects delete refuses the whole list when one id has such bytes", async () => {
    const result = await runCli(["--project", project, "--json", "objects", "delete", "other", keepFF]);
    expect(refusal(result)).toMatchObject({ exitCode: 4, code: "ARGUMENT_NOT_UTF8" });
    expect(await stored()).toEqual([...ids].sort());
  });

  it("objects get refuses such an id rather than showing another object", async () => {
    const result = await runCli(["--project", project, "--json", "objects", "get", keepFF]);
    expect(refusal(result)).toMatchObject({ exitCode: 4, code: "ARGUMENT_NOT_UTF8" });
  });

  it("a U+FFFD typed as its own bytes is refused too: a command line cannot tell it from a replaced byte", async () => {
    const result = await runCli(["--project", project, "--json", "objects", "delete", Buffer.from(REPLACED)]);
    expect(refusal(result)).toMatchObject({ exitCode: 4, code: "ARGUMENT_NOT_UTF8" });
    expect(await stored()).toEqual([...ids].sort());
  });

  it("the error names the flag it is in, and prints for a person on stderr with a hint", async () => {
    const result = await runCli(["--project", project, "objects", "delete", "--path", Buffer.from([...Buffer.from("notes/a"), 0xe9, ...Buffer.from(".md")])]);
    expect([result.exitCode, result.stdout]).toEqual([4, ""]);
    expect(result.stderr).toContain('error: objects delete --path "notes/a\\ufffd.md" holds U+FFFD at character 8');
    expect(result.stderr).toContain("ids on standard input (objects delete -)");
  });
});

describe("ids on standard input", () => {
  it("objects delete - refuses a line that is not UTF-8, naming its line and byte, and deletes nothing", async () => {
    const input = Buffer.concat([Buffer.from("other\n"), keepFF, Buffer.from("\n")]);
    const result = await runCli(["--project", project, "--json", "objects", "delete", "-"], { input });
    expect(refusal(result)).toEqual({
      exitCode: 4,
      code: "INVALID_INPUT",
      message: "<stdin>:2: invalid UTF-8: byte 0xff at byte 5 of the line is not valid text in UTF-8 (convert the file to UTF-8, e.g. with iconv)",
    });
    expect(await stored()).toEqual([...ids].sort());
  });

  it("objects delete - deletes the object whose id holds U+FFFD when the line holds its bytes (EF BF BD), and only it", async () => {
    const result = await runCli(["--project", project, "--json", "objects", "delete", "-"], { input: Buffer.from(`${REPLACED}\r\n`) });
    expect([result.exitCode, result.stderr]).toEqual([0, ""]);
    expect(JSON.parse(result.stdout)).toEqual({ count: 1, deleted: [REPLACED] });
    expect(await stored()).toEqual(["keep", "other"]);
  });
});

describe("ids over HTTP", () => {
  it("a U+FFFD percent-encoded from its bytes means itself; an escape that is not UTF-8 is 422 and deletes nothing", async () => {
    const server = await serve(project, ["--no-auth"]);
    try {
      const refused = await call(`${server.url}/v1/objects/keep%FF`, null, { method: "DELETE" });
      expect([refused.status, refused.json?.errors?.[0]?.code]).toEqual([422, "INVALID_PATH"]);
      expect(await stored()).toEqual([...ids].sort());
      const deleted = await call(`${server.url}/v1/objects/keep%EF%BF%BD`, null, { method: "DELETE" });
      expect([deleted.status, deleted.json]).toEqual([200, { deleted: REPLACED }]);
      expect(await stored()).toEqual(["keep", "other"]);
    } finally {
      await server.stop();
    }
  });
});
