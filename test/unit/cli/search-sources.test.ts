/** Where a search's query and filter come from: words, a file, or standard input (`-`), one source each. */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { argumentSources } from "../../../src/cli/commands/search-command.js";
import { isStandardInput, readArgumentFile } from "../../../src/cli/options.js";
import { tempDir } from "../../helpers/temp.js";

describe("argumentSources", () => {
  it("takes words and --filter as they are, and leaves files and - to be read", () => {
    expect(argumentSources(["trail", "shoes"], { filter: "price:<10" })).toEqual({ query: "trail shoes", filter: "price:<10" });
    expect(argumentSources(["-"], {})).toEqual({ query: null, filter: null });
    expect(argumentSources([], { queryFile: "q.txt", filterFile: "-" })).toEqual({ query: null, filter: null });
    expect(argumentSources(["a", "-"], {})).toEqual({ query: "a -", filter: null });
  });

  it.each([
    [[], {}, "MISSING_QUERY"],
    [["shoes"], { queryFile: "q.txt" }, "CONFLICTING_OPTIONS"],
    [["-"], { queryFile: "q.txt" }, "CONFLICTING_OPTIONS"],
    [["shoes"], { filter: "a:b", filterFile: "f.txt" }, "CONFLICTING_OPTIONS"],
    [["-"], { filterFile: "-" }, "CONFLICTING_OPTIONS"],
    [[], { queryFile: "-", filterFile: "-" }, "CONFLICTING_OPTIONS"],
    [["-"], { filterFile: "/dev/stdin" }, "CONFLICTING_OPTIONS"],
    [[], { queryFile: "/proc/self/fd/0", filterFile: "-" }, "CONFLICTING_OPTIONS"],
  ] as const)("refuses %j with %j: %s, exit 2", (words, options, code) => {
    const stdin = (file: string) => ["-", "/dev/stdin", "/proc/self/fd/0"].includes(file);
    expect(() => argumentSources([...words], options, stdin)).toThrow(expect.objectContaining({ code, exitCode: 2 }));
  });
});

describe("readArgumentFile", () => {
  it("reads UTF-8 whole, a character across the reads' chunks too, without the last line end", async () => {
    const file = path.join(tempDir(), "q.txt");
    writeFileSync(file, `${"a".repeat(65_535)}€ river\r\n`);
    expect(await readArgumentFile(file, "--query-file", 1 << 20)).toBe(`${"a".repeat(65_535)}€ river`);
  });

  it("refuses bytes that are not UTF-8 rather than reading them as U+FFFD (a filter value would silently match nothing)", async () => {
    const file = path.join(tempDir(), "f.txt");
    writeFileSync(file, Buffer.from([...Buffer.from('topic:"caf'), 0xe9, ...Buffer.from('"')]));
    await expect(readArgumentFile(file, "--filter-file", 1 << 20)).rejects.toMatchObject({ code: "INPUT_NOT_UTF8", exitCode: 2, message: `--filter-file ${file}: not UTF-8 text (convert it to UTF-8, e.g. with iconv)` });
  });
});

describe("isStandardInput", () => {
  it("is true for - and for a path to the file standard input is, false for another file or none", () => {
    const other = path.join(tempDir(), "other.txt");
    writeFileSync(other, "x");
    expect(isStandardInput("-")).toBe(true);
    expect(isStandardInput("/proc/self/fd/0")).toBe(true);
    expect(isStandardInput(other)).toBe(false);
    expect(isStandardInput(path.join(tempDir(), "missing"))).toBe(false);
  });
});
