/** Where a search's query and filter come from: words, a file, or standard input (`-`), one source each. */
import { describe, expect, it } from "vitest";
import { argumentSources } from "../../../src/cli/commands/search-command.js";

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
  ] as const)("refuses %j with %j: %s, exit 2", (words, options, code) => {
    expect(() => argumentSources([...words], options)).toThrow(expect.objectContaining({ code, exitCode: 2 }));
  });
});
