/**
 * `--project` values an outside tester would try: addresses with spaces or invisible characters
 * around them, in look-alike characters, paths whose bytes were not UTF-8, prefixes too long in
 * bytes. Each was read as a local folder named after it (or a key the store would refuse), so each
 * is refused; local paths that merely hold such characters stay local.
 */
import { describe, expect, it } from "vitest";
import { usageError } from "../../helpers/errors.js";
import { parseProjectLocation, projectAddress } from "../../../src/engine/location.js";

const refusal = (given: string, read: (value: string) => unknown = parseProjectLocation) => usageError(() => read(given));

describe("an address with something around it a user cannot see", () => {
  it.each([
    [" s3://bucket/x", '" s3://bucket/x"'],
    ["s3://bucket/x ", '"s3://bucket/x "'],
    ["\ts3://bucket/x", null], // (a control character: refused as such)
    ["\u00a0s3://bucket/x", '"\\u00a0s3://bucket/x"'],
    ["\u200bs3://bucket/x", '"\\u200bs3://bucket/x"'],
    ["\ufeffs3://bucket/x", '"\\ufeffs3://bucket/x"'],
    ["\u202egs://bucket/x", '"\\u202egs://bucket/x"'],
    ["s3://bucket/x\u200b", '"s3://bucket/x\\u200b"'],
    [" S3:/bucket", '" S3:/bucket"'],
  ])("%j is refused, shown with what cannot be seen escaped", (given, quoted) => {
    const error = refusal(given);
    expect(error.code).toBe("INVALID_PROJECT");
    if (quoted === null) return;
    expect(error.message).toContain(`The project ${quoted} holds spaces or invisible characters around an address`);
    expect(error.hint).toContain(given.trim().replace(/[\u200b\ufeff\u202e]/g, ""));
  });
});

describe("an address in look-alike characters", () => {
  it.each([
    ["ｓ3://bucket/x", "look-alike", "s3://bucket/x"],
    ["s3：//bucket/x", "look-alike", "s3://bucket/x"],
    ["ｇｓ://bucket", "look-alike", "gs://bucket"],
    ["ѕ3://bucket/x", "not written in plain letters", "./"], // (Cyrillic dze: no normal form makes it an s)
    ["ⓢ3://bucket", "look-alike", "s3://bucket"],
  ])("%s", (given, said, hinted) => {
    const error = refusal(given);
    expect(error.code).toBe("INVALID_PROJECT");
    expect(error.message).toContain(said);
    expect(error.hint).toContain(hinted);
  });

  it("a prefix holding an invisible character", () => {
    expect(refusal("s3://bucket/a\u200bb").message).toContain("invisible character");
  });

  it("a prefix longer than 512 bytes in UTF-8, though fewer characters", () => {
    const error = refusal(`s3://bucket/${"é".repeat(300)}`);
    expect(error.message).toContain("600 bytes long in UTF-8 (at most 512)");
    expect(parseProjectLocation(`s3://bucket/${"é".repeat(256)}`)).toMatchObject({ kind: "remote" });
  });
});

describe("a path whose bytes were not UTF-8", () => {
  // Node reads argv and the environment as UTF-8, putting U+FFFD for bytes that are not: the folder
  // written was another than the one named.
  it.each(["/tmp/bad\ufffdname", "proj\ud800", "\udc00"])("%j is refused", (given) => {
    const error = refusal(given);
    expect(error.code).toBe("INVALID_PROJECT");
    expect(error.message).toContain("not UTF-8");
    expect(error.message).not.toContain("\ufffd"); // (shown escaped: \\ufffd)
  });
});

describe("local paths that merely hold such characters stay local", () => {
  it.each(["/tmp/a://b", "./ｓ3://bucket", "./ s3://bucket", "dir with space ", " lead", "a:b", "ñandú/日本", "proj\u200b", "./s3://bucket/x", "100%/x"])("%j", (given) => {
    expect(parseProjectLocation(given)).toEqual({ kind: "local", dir: given });
  });
});

describe("a Cloud Storage or Azure address given to this version", () => {
  it("is refused, and the hint names the folder an older version made of it", () => {
    const error = refusal("gs://bucket/x/", projectAddress);
    expect(error.code).toBe("REMOTE_PROJECT_UNSUPPORTED");
    expect(error.hint).toContain("./gs:/bucket/x ");
    // …which is read as that local folder
    expect(projectAddress("./gs:/bucket/x")).toBe("./gs:/bucket/x");
  });
});
