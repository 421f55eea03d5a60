import { describe, expect, it } from "vitest";
import { sqlIn, sqlNumber, sqlString } from "../../../src/engine/store/sql.js";

describe("sql literals", () => {
  it.each([
    ["plain", "'plain'"],
    ["O'Brien", "'O''Brien'"],
    ["' OR 1=1 --", "''' OR 1=1 --'"],
    ["back\\slash", "'back\\slash'"],
  ])("%j → %s", (value, literal) => {
    expect(sqlString(value)).toBe(literal);
  });
  it("rejects NUL and non-finite numbers", () => {
    expect(() => sqlString("a\u0000b")).toThrow(RangeError);
    expect(() => sqlNumber(Number.NaN)).toThrow(RangeError);
  });
  it("builds IN lists", () => {
    expect(sqlIn("id", ["a", "b'c"])).toBe("id IN ('a', 'b''c')");
    expect(() => sqlIn("id", [])).toThrow(RangeError);
  });
});
