/**
 * One temporary root per test run: TMPDIR points into it for the test workers and every CLI they
 * start, and the whole root is removed when the run ends, so no test leaves directories behind.
 * The models folder lives there too, and the hub is a closed local port unless a test starts its own.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export default function setup(): () => void {
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
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  };
}
