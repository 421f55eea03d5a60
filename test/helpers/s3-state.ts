/**
 * The S3 side of the tests: a real S3-compatible server started by `.ci/s3-server` (Ceph RGW on
 * 127.0.0.1), whose address and keys are in the environment (AWS_ENDPOINT_URL…, SEMSEARCH_TEST_S3=1).
 * Without one, the S3 cases are skipped. Each test file makes its own bucket.
 */
import { randomBytes } from "node:crypto";
import { s3Config } from "../../src/engine/state/s3-config.js";
import { S3StateStore } from "../../src/engine/state/s3-store.js";

export function s3Available(): boolean {
  return process.env.SEMSEARCH_TEST_S3 === "1" && process.env.AWS_ENDPOINT_URL !== undefined;
}

const unique = () => `${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;

let bucket: Promise<string> | undefined;

/** A bucket of this test file's own (made once per file). */
export function testBucket(): Promise<string> {
  bucket ??= (async () => {
    const name = `semsearch-test-${unique()}`;
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true"; // (as S3StateStore.open does)
    const sdk = await import("@aws-sdk/client-s3");
    const config = s3Config(process.env);
    const client = new sdk.S3Client({ region: config.region, endpoint: config.endpoint, forcePathStyle: true });
    await client.send(new sdk.CreateBucketCommand({ Bucket: name }));
    client.destroy();
    return name;
  })();
  return bucket;
}

/** A state store on a fresh prefix of this file's bucket. */
export async function s3TestStore(): Promise<S3StateStore> {
  return S3StateStore.open(await testBucket(), `t-${unique()}`, s3Config(process.env));
}
