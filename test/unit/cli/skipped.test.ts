/** The line that ends an `objects add` of files which skipped some (issue 40): counted by why, largest group first. */
import { describe, expect, it } from "vitest";
import { skippedLine } from "../../../src/cli/render/skipped.js";
import type { SkipKind } from "../../../src/engine/files/document.js";

type Case = [{ path: string; kind: SkipKind }[], string | null];

describe("skippedLine", () => {
  it.each([
    [[], null],
    [[{ path: "a/x.bin", kind: "format" }], "Skipped 1 file: 1 of a format semsearch does not read (each is listed with its reason in the output)."],
    [
      [
        { path: "a/big.md", kind: "size" },
        ...Array.from({ length: 10 }, (_, i) => ({ path: `a/${i}.txt`, kind: "encoding" as const })),
        { path: "a/huge.md", kind: "size" },
        { path: "a/old/", kind: "project" },
        { path: "a/slow.md", kind: "limit" },
        { path: "a/other.md", kind: "size" },
      ],
      "Skipped 14 files and 1 folder: 10 binary or not UTF-8, 3 over --max-file-size, 1 semsearch project's folder, 1 stopped at a reading limit (each is listed with its reason in the output).",
    ],
    [[{ path: "a/", kind: "unreadable" }, { path: "b/", kind: "unreadable" }], "Skipped 2 folders: 2 unreadable (each is listed with its reason in the output)."],
  ] satisfies Case[])("%#", (skipped, line) => {
    expect(skippedLine(skipped)).toBe(line);
  });
});
