/**
 * The S3 side of the unit tests: a state store on a fresh prefix of a bucket of this test file's own,
 * on the tests' S3 server (s3.ts). Without a server, the S3 cases are skipped.
 */
import { randomBytes } from "node:crypto";
import { s3Config } from "../../src/engine/state/s3-config.js";
import { S3StateStore } from "../../src/engine/state/s3-store.js";
import { freshBucket, type TestBucket } from "./s3.js";

export { s3Available } from "./s3.js";

let bucket: Promise<TestBucket> | undefined;

/** The name of a bucket of this test file's own (made once per file, emptied and removed by the server's stop). */
export async function testBucket(): Promise<string> {
  bucket ??= freshBucket("semsearch-test");
  return (await bucket).name;
}

/** A state store on a fresh prefix of this file's bucket. */
export async function s3TestStore(): Promise<S3StateStore> {
  return S3StateStore.open(await testBucket(), `t-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`, s3Config(process.env));
}
