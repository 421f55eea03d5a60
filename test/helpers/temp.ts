/** Temporary directories for tests (under the run's own temporary root, removed after the run: see global-setup.ts). */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** A new empty directory under the system's temporary directory. */
export function tempDir(prefix = "semsearch-test-"): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}
