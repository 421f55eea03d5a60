/** `--max-file-size`'s reading of sizes. */
import { describe, expect, it } from "vitest";
import { sizeArg } from "../../../src/cli/options.js";

describe("sizeArg", () => {
  it("reads bytes and binary units, case and a space ignored", () => {
    expect([sizeArg("500"), sizeArg("2KB"), sizeArg("10mb"), sizeArg("1.5 GB"), sizeArg("3MiB"), sizeArg("7k")]).toEqual([500, 2048, 10 * 1024 ** 2, 1.5 * 1024 ** 3, 3 * 1024 ** 2, 7168]);
  });
  it("refuses what is not a size, naming it", () => {
    for (const bad of ["", "ten", "-5", "5TB", "0", "0.1", "1e3", "9".repeat(400)]) expect(() => sizeArg(bad), bad).toThrow(/expected a size/);
  });
});
