/** semsearch's own package.json: its version (for --version, the bug-report line and serve's OpenAPI document) and where to report bugs. */
import { readFileSync } from "node:fs";

export const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string; bugs?: { url?: string } };
