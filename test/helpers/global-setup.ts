/**
 * One temporary root per test run: TMPDIR points into it for the test workers and every CLI they
 * start, and the whole root is removed when the run ends, so no test leaves directories behind.
 * The models folder lives there too, and the hub is a closed local port unless a test starts its own.
 *
 * With SEMSEARCH_S3_SERVER=start (as `npm test` sets it), the run also starts a throw-away S3 server
 * (.ci/s3-server: Ceph RGW on 127.0.0.1, about 15 s) for the object-storage tests, when its packages
 * are installed (`.ci/s3-server install`), and stops it at the end; without them those tests are
 * skipped, and the run says so. A server already described by the environment (SEMSEARCH_TEST_S3=1
 * and the AWS_* variables) is used as it is.
 */
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const S3_SERVER = fileURLToPath(new URL("../../.ci/s3-server", import.meta.url));

/** Starts the S3 server in `dir` and puts its variables in this process's environment; its stop, or null. */
function startS3Server(dir: string): (() => Promise<void>) | null {
  if (spawnSync("sh", ["-c", "command -v radosgw && command -v ceph-mon"], { stdio: "ignore" }).status !== 0) {
    process.stderr.write("semsearch tests: no S3 server (run .ci/s3-server install as root): the object-storage tests are skipped\n");
    return null;
  }
  execFileSync(S3_SERVER, ["start", dir], { stdio: ["ignore", "ignore", "inherit"] });
  for (const line of readFileSync(path.join(dir, "env"), "utf8").split("\n")) {
    const match = /^export ([A-Z0-9_]+)=(.*)$/.exec(line);
    // (not its SEMSEARCH_PROJECT, the bucket it made for a person: tests name their own projects)
    if (match && match[1] !== "SEMSEARCH_PROJECT") process.env[match[1] as string] = match[2];
  }
  // (stopped without blocking this process: vitest ends its test processes meanwhile)
  return () => promisify(execFile)(S3_SERVER, ["stop", dir]).then(() => undefined);
}

export default function setup(): () => Promise<void> {
  const root = mkdtempSync(path.join(tmpdir(), "semsearch-tests-"));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = root;
  // Models are downloaded only from the tests' own hub servers, into the run's root: never from the
  // network (a closed port answers), never into the user's cache.
  process.env.SEMSEARCH_MODELS = path.join(root, "models");
  process.env.SEMSEARCH_HF_ENDPOINT = "http://127.0.0.1:9";
  // Tests that load onnxruntime in their own process (not through semsearch, which turns it off
  // itself) must not start its telemetry either; commands the tests run get a user's environment
  // without this (helpers/cli.ts, userEnv).
  process.env.ORT_DISABLE_TELEMETRY = "1";
  // The AWS SDK's notice that its 2027 releases need Node 22 (semsearch keeps it off users' stderr too),
  // and no region or credentials from a cloud's instance metadata address (the tests' server has both).
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
  process.env.AWS_EC2_METADATA_DISABLED = "true";
  const stopS3 = process.env.SEMSEARCH_S3_SERVER === "start" && process.env.SEMSEARCH_TEST_S3 !== "1" ? startS3Server(path.join(root, "s3")) : null;
  return async () => {
    await stopS3?.();
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  };
}
