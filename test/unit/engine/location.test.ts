/**
 * Where a project lives (`--project`): local directories as given, buckets read into scheme, bucket
 * and prefix, and everything a URI would change or a user cannot have meant refused with a reason.
 */
import { describe, expect, it } from "vitest";
import { usageError } from "../../helpers/errors.js";
import { parseProjectLocation, projectAddress } from "../../../src/engine/location.js";

const refusal = (given: string) => usageError(() => parseProjectLocation(given));

describe("local directories", () => {
  it.each(["proj", "./s3:x", "/abs/path", "../up", "C:/Users/x", "dir with space", "a:b", "ñandú/日本"])("%s is a local directory, as given", (given) => {
    expect(parseProjectLocation(given)).toEqual({ kind: "local", dir: given });
  });

  it("file:// with an absolute path is that path", () => {
    expect(parseProjectLocation("file:///srv/proj")).toEqual({ kind: "local", dir: "/srv/proj" });
  });
});

describe("buckets", () => {
  it.each([
    ["s3://my-bucket/some/prefix", "s3", "my-bucket", "some/prefix"],
    ["s3://my-bucket/some/prefix/", "s3", "my-bucket", "some/prefix"],
    ["s3://my.bucket.1", "s3", "my.bucket.1", ""],
    ["s3://abc/", "s3", "abc", ""],
    ["gs://my_bucket/p", "gs", "my_bucket", "p"],
    ["az://container-1/a/b.c", "az", "container-1", "a/b.c"],
  ])("%s", (given, scheme, bucket, prefix) => {
    expect(parseProjectLocation(given)).toEqual({ kind: "remote", scheme, bucket, prefix, uri: prefix === "" ? `${scheme}://${bucket}` : `${scheme}://${bucket}/${prefix}` });
  });

  it("an S3 bucket is a project at its normalised address; Cloud Storage and Azure are refused, naming them, before anything is touched", () => {
    expect(projectAddress("s3://bucket/x/")).toBe("s3://bucket/x");
    expect(projectAddress("s3://bucket")).toBe("s3://bucket");
    expect(projectAddress("./x")).toBe("./x");
    for (const given of ["gs://bucket/x/", "az://container-1/x"]) {
      const error = usageError(() => projectAddress(given));
      expect(error.code).toBe("REMOTE_PROJECT_UNSUPPORTED");
      expect(error.exitCode).toBe(2);
      expect(error.message).toContain(given.replace(/\/$/, ""));
    }
  });
});

describe("refused, with the reason", () => {
  it.each([
    ["s3:/bucket/x", "looks like a s3:// address", "s3://bucket/x"],
    ["s3:bucket", "looks like a s3:// address", "./s3:bucket"],
    ["S3://bucket/x", "capitals", "s3://bucket/x"],
    ["https://example.com/p", "cannot store a project on", "s3://bucket/prefix"],
    ["memory://x", "cannot store a project on", ""],
    ["file://relative", "without an absolute path", ""],
    ["s3://", "names no bucket", ""],
    ["s3:///prefix", "names no bucket", ""],
    ["s3://ab/x", "2 characters long", ""],
    ["s3://My-Bucket/x", "lowercase letters", ""],
    ["s3://bad_underscore", "lowercase letters", ""],
    ["s3://a..b", "two dots", ""],
    ["s3://192.168.1.1/x", "IP address", ""],
    ["az://a--b", "single hyphens", ""],
    ["s3://key:secret@bucket/x", "credentials", "AWS_ACCESS_KEY_ID"],
    ["s3://bucket:9000/x", "credentials or a port", "AWS_ENDPOINT_URL"],
    ["s3://bucket/a//b", "empty part", ""],
    ["s3://bucket/a/../b", '".."', ""],
    ["s3://bucket/a?b", "?, #, %", ""],
    ["s3://bucket/a%2Fb", "?, #, %", ""],
    ["s3://bucket/a b", "?, #, %", ""],
    [`s3://bucket/${"p".repeat(513)}`, "at most 512", ""],
  ])("%s", (given, said, hinted) => {
    const error = refusal(given);
    expect(error.code).toBe("INVALID_PROJECT");
    expect(error.message).toContain(said);
    expect(error.hint ?? "").toContain(hinted);
  });

  it.each(["new\nline", "tab\there", "nul\u0000", "del\u007f", "c1\u0085"])("a control character: %j", (given) => {
    expect(refusal(given).message).toContain("control character");
  });

  it("an empty value", () => {
    expect(refusal("  ").code).toBe("EMPTY_PROJECT");
  });
});

describe("a bucket prefix inside a LanceDB table", () => {
  it.each(["s3://b-1/p/data/objects.lance", "s3://b-1/p/data/objects.lance/x", "s3://b-1/t.lance"])("%s is refused: a project there would mix its files with the table's", (given) => {
    const error = usageError(() => parseProjectLocation(given));
    expect(error.code).toBe("INVALID_PROJECT");
    expect(error.message).toContain("inside a LanceDB table");
  });

  it("a prefix beside another project's data is a project of its own", () => {
    expect(parseProjectLocation("s3://b-1/p/data")).toMatchObject({ kind: "remote", prefix: "p/data" });
  });
});

describe("Cloud Storage and Azure addresses", () => {
  it.each(["gs://b/p", "az://x/y", "gs://Bad_Bucket"])("%s is refused as a store semsearch cannot use, whatever else is wrong with it", (given) => {
    expect(usageError(() => projectAddress(given)).code).toBe("REMOTE_PROJECT_UNSUPPORTED");
  });

  it("a control character is refused first, as in any project path", () => {
    expect(usageError(() => projectAddress("gs://b\n/p")).code).toBe("INVALID_PROJECT");
  });
});
