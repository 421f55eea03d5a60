/** Tab-separated values for pipes (tsv.ts). */
import { describe, expect, it } from "vitest";
import { tsv } from "../../../src/cli/render/tsv.js";

describe("tsv", () => {
  it("writes a header line and one line per row, values whole, styling dropped", () => {
    expect(tsv(["id", "score", "title"], [["a", "0.912", "\u001b[1mTide\u001b[22mwater coat"], ["b", 1, { n: 2 }]])).toBe("id\tscore\ttitle\na\t0.912\tTidewater coat\nb\t1\t{\"n\":2}\n");
  });

  it("turns tabs and line breaks inside a value into spaces, and missing values into nothing", () => {
    expect(tsv(["a", "b"], [["x\ty\r\nz", undefined], [null, ""]])).toBe("a\tb\nx y z\t\n\t\n");
  });
});
