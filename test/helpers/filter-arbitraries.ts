/** fast-check arbitraries for filter trees, shared by the parser and compiler property tests. */
import fc from "fast-check";
import type { FilterNode } from "../../src/engine/search/filter-syntax.js";

const f = (path: string) => ({ path, column: 0 });
/** Random filter trees, with values of any text (quoted) or bare words. */
const fieldArb = fc.constantFrom("a", "price", "maker.country", "größe", "x_1");
const quotedArb = fc.string({ unit: "binary", maxLength: 12 }).map((text) => ({ text, quoted: true, column: 0 }));
const bareArb = fc.stringMatching(/^[A-Za-z0-9_.:-]{1,8}$/).filter((t) => t !== "TO").map((text) => ({ text, quoted: false, column: 0 }));
const literalArb = fc.oneof(quotedArb, bareArb);
const boundArb = fc.option(fc.record({ value: literalArb, inclusive: fc.boolean() }), { nil: null });
const conditionArb: fc.Arbitrary<FilterNode> = fc.oneof(
  fc.record({ kind: fc.constant("match" as const), field: fieldArb.map(f), value: literalArb }),
  fc.record({ kind: fc.constant("exists" as const), field: fieldArb.map(f) }),
  fc.record({ kind: fc.constant("compare" as const), field: fieldArb.map(f), op: fc.constantFrom(">", ">=", "<", "<=") as fc.Arbitrary<">">, value: literalArb }),
  fc.record({ kind: fc.constant("range" as const), field: fieldArb.map(f), lower: boundArb, upper: boundArb }),
);
/** Random filter trees over the given conditions: ANDs, ORs (at most `widestOr` operands) and NOTs. */
export function filterTreeArb(condition: fc.Arbitrary<FilterNode>, widestOr = 3): fc.Arbitrary<FilterNode> {
  return fc.letrec<{ node: FilterNode }>((tie) => ({
    node: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      condition,
      fc.record({ kind: fc.constant("and" as const), items: fc.array(tie("node"), { minLength: 2, maxLength: 3 }) }),
      fc.record({ kind: fc.constant("or" as const), items: fc.array(tie("node"), { minLength: 2, maxLength: widestOr }) }),
      fc.record({ kind: fc.constant("not" as const), item: tie("node") }),
    ),
  })).node;
}

export const filterArb: fc.Arbitrary<FilterNode> = filterTreeArb(conditionArb);
