import { describe, expect, it } from "vitest";
import { withTypo } from "../../../src/eval/typos.js";

describe("withTypo", () => {
  it("changes one word of 5 letters or more by one edit, never its first letter, the same way each time", () => {
    for (let seed = 0; seed < 200; seed++) {
      const query = "which cells express the receptor in mice";
      const typo = withTypo(query, seed);
      expect(withTypo(query, seed)).toBe(typo);
      const before = query.split(" ");
      const after = typo.split(" ");
      expect(after).toHaveLength(before.length);
      const changed = before.flatMap((word, i) => (word !== after[i] ? [i] : []));
      expect(changed, typo).toHaveLength(1);
      const [from, to] = [before[changed[0] as number] as string, after[changed[0] as number] as string];
      expect(from.length).toBeGreaterThanOrEqual(5);
      expect(to[0]).toBe(from[0]);
      expect(Math.abs(to.length - from.length)).toBeLessThanOrEqual(1);
    }
  });
  it("leaves a query without a long enough word alone", () => {
    expect(withTypo("tea for two", 3)).toBe("tea for two");
  });
});
