/**
 * Buckets on the tests' S3-compatible server: a local Ceph RADOS Gateway started by
 * `.ci/s3-server start`, whose `export` lines set the standard AWS variables and SEMSEARCH_TEST_S3=1.
 * Tests that need it skip without it: `describe.skipIf(!s3Available())(…)`.
 *
 * Each test makes its own bucket, so tests never see each other's objects:
 *
 *   const bucket = await freshBucket("search");
 *   onTestFinished(() => bucket.remove());
 *   await runCli(["--project", bucket.uri("project"), …], { env: s3Env() });
 */
import { randomBytes } from "node:crypto";
import {
  PutObjectCommand,
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutBucketPolicyCommand,
  S3Client,
} from "@aws-sdk/client-s3";

/** The variables `.ci/s3-server start` exports; semsearch and LanceDB read these same ones. */
const S3_VARIABLES = ["AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ALLOW_HTTP"] as const;

/** Whether the test server's variables are set (`.ci/s3-server start`'s export lines, before the tests). */
export function s3Available(): boolean {
  return process.env.SEMSEARCH_TEST_S3 === "1" && S3_VARIABLES.every((name) => process.env[name]);
}

/** The server's variables, for a command's environment (runCli's `env`, serve's `env`). */
export function s3Env(): Record<string, string> {
  if (!s3Available()) throw new Error("no S3 test server: start one with .ci/s3-server and export what it prints");
  return Object.fromEntries(S3_VARIABLES.map((name) => [name, process.env[name] as string]));
}

/**
 * A client for the test server. Path-style requests (`http://host/bucket/key`): the server has no
 * DNS name for virtual-hosted buckets. Configured from the variables only, never from ~/.aws.
 */
export function s3Client(endpoint?: string): S3Client {
  const env = s3Env();
  return new S3Client({
    endpoint: endpoint ?? env.AWS_ENDPOINT_URL,
    region: env.AWS_REGION,
    credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID as string, secretAccessKey: env.AWS_SECRET_ACCESS_KEY as string },
    forcePathStyle: true,
  });
}

export interface TestBucket {
  name: string;
  /** `s3://<bucket>/<prefix>`, or the bucket's root without a prefix. */
  uri(prefix?: string): string;
  /** Every key in the bucket (or under `prefix`), sorted. */
  keys(prefix?: string): Promise<string[]>;
  /** Writes an object (as another program, or a damage, would). */
  put(key: string, body: string): Promise<void>;
  /** Deletes every object and unfinished upload, then the bucket; safe to call twice. */
  remove(): Promise<void>;
}

export interface FreshBucketOptions {
  /**
   * Let anyone read and write the bucket without signing (a bucket policy). Only for requests that
   * go through the header-stripping proxy (s3-proxy.ts), which must drop their signatures.
   */
  anonymous?: boolean;
}

/**
 * Creates an empty bucket whose name no other test (or run against the same server) uses: the
 * prefix, made a valid bucket name, then the process id and random characters.
 */
export async function freshBucket(prefix: string, options: FreshBucketOptions = {}): Promise<TestBucket> {
  const client = s3Client();
  const safe = prefix.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 30) || "test";
  const name = `${safe}-${process.pid}-${randomBytes(6).toString("hex")}`;
  await client.send(new CreateBucketCommand({ Bucket: name }));
  if (options.anonymous) {
    const Resource = [`arn:aws:s3:::${name}`, `arn:aws:s3:::${name}/*`];
    const Policy = JSON.stringify({ Version: "2012-10-17", Statement: [{ Effect: "Allow", Principal: "*", Action: "s3:*", Resource }] });
    await client.send(new PutBucketPolicyCommand({ Bucket: name, Policy }));
  }
  let removed = false;
  return {
    name,
    uri: (path?: string) => (path ? `s3://${name}/${path.replace(/^\/+/, "")}` : `s3://${name}`),
    keys: async (path?: string) => (await listKeys(client, name, path)).sort(),
    put: async (key: string, body: string) => {
      await client.send(new PutObjectCommand({ Bucket: name, Key: key, Body: body }));
    },
    remove: async () => {
      if (removed) return;
      await emptyBucket(client, name);
      await client.send(new DeleteBucketCommand({ Bucket: name }));
      removed = true;
    },
  };
}

async function listKeys(client: S3Client, bucket: string, prefix?: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const object of page.Contents ?? []) if (object.Key !== undefined) keys.push(object.Key);
    token = page.NextContinuationToken;
  } while (token);
  return keys;
}

/** Deletes every object, 1,000 keys a request (S3's limit), and aborts uploads a killed writer left. */
async function emptyBucket(client: S3Client, bucket: string): Promise<void> {
  const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
  for (const upload of uploads.Uploads ?? []) {
    await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: upload.Key, UploadId: upload.UploadId }));
  }
  const keys = await listKeys(client, bucket);
  for (let start = 0; start < keys.length; start += 1000) {
    const Objects = keys.slice(start, start + 1000).map((Key) => ({ Key }));
    await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects, Quiet: true } }));
  }
}
