import { describe, expect, it } from "vitest";
import { parseCreateIndexBody } from "../../../src/engine/config.js";
import { batchFilters, filterColumn, listColumn } from "../../../src/engine/filter-fields.js";
import { parseFilter, type FilterNode } from "../../../src/engine/search/filter-syntax.js";
import { decomposedQueryWarning, filterInForm, textForm } from "../../../src/engine/text-form.js";

const nfd = (text: string) => text.normalize("NFD");
const nfc = textForm({ normalization: "NFC" });
const asGiven = textForm({});

describe("textForm", () => {
  it("puts text in NFC for an index that records it, and leaves it as given for one created before", () => {
    expect(nfc(nfd("Zürich"))).toBe("Zürich");
    expect(nfc("Zürich")).toBe("Zürich");
    expect(nfc("Zu\u0308rich und Ko\u0308ln")).toBe("Zürich und Köln");
    // an accent with no composed letter stays a mark of its own; text that is not Latin is left alone
    expect(nfc("q\u0301")).toBe("q\u0301");
    expect(nfc("日本語 москва")).toBe("日本語 москва");
    expect(asGiven(nfd("Zürich"))).toBe(nfd("Zürich"));
  });
});

describe("filterInForm", () => {
  it("puts every value in the form, keeping fields and columns (errors point into the filter as typed)", () => {
    const filter = parseFilter(`city:${nfd("Zürich")} OR NOT (name:"${nfd("Café")}" AND size:[${nfd("à")} TO ${nfd("é")}}) OR tag:* OR n:>${nfd("ü")}`) as FilterNode;
    const normalized = filterInForm(filter, nfc);
    expect(JSON.stringify(normalized)).toBe(JSON.stringify(filter).normalize("NFC"));
    expect(JSON.stringify(normalized)).not.toBe(JSON.stringify(filter));
    // (the columns are those of the filter as typed)
    expect(normalized).toMatchObject({ kind: "or", items: [{ kind: "match", value: { text: "Zürich", column: 6 } }, {}, {}, {}] });
    expect(filterInForm(filter, asGiven)).toEqual(filter);
  });
});

describe("decomposedQueryWarning", () => {
  const old = { id: "idx_old" };
  it("warns for an index created before normalization, when the query or a filter value is decomposed", () => {
    expect(decomposedQueryWarning(old, nfd("Zürich"), null)?.code).toBe("TEXT_NOT_NORMALIZED");
    expect(decomposedQueryWarning(old, nfd("Zürich"), null)?.message).toMatch(/^The query holds decomposed accents .* index idx_old was created before .* Create the index again/);
    expect(decomposedQueryWarning(old, "Zürich", parseFilter(`city:${nfd("Zürich")}`))?.message).toMatch(/^The filter holds/);
    expect(decomposedQueryWarning(old, "Zürich", parseFilter(`n:[1 TO ${nfd("é")}]`))?.message).toMatch(/^The filter holds/);
  });
  it("is silent for composed text, and for indexes that normalize", () => {
    expect(decomposedQueryWarning(old, "Zürich", parseFilter("city:Zürich OR tag:*"))).toBeNull();
    expect(decomposedQueryWarning({ ...old, normalization: "NFC" }, nfd("Zürich"), parseFilter(`city:${nfd("Zürich")}`))).toBeNull();
  });
});

describe("batchFilters in a form", () => {
  it("stores string values, scalars and list elements, in the form; numbers as they are", () => {
    const config = parseCreateIndexBody({ configuration: { index_type: { name: "text" }, fields: { types: { n: "int" } } } }).configuration;
    const object = { city: nfd("Zürich"), tags: [nfd("café"), "café", "tea"], n: 3 };
    const record = batchFilters([{ id: nfd("é"), object }], config, nfc).records.get(nfd("é"));
    expect(record).toEqual({ [filterColumn("id")]: "é", [filterColumn("city")]: "Zürich", [listColumn("tags")]: ["café", "tea"], [filterColumn("n")]: 3 });
    // without a form, as given
    expect(batchFilters([{ id: "x", object }], config).records.get("x")?.[filterColumn("city")]).toBe(nfd("Zürich"));
  });
});
