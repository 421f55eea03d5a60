/** Which field of objects without an id looks like their id (id-guess.ts). */
import { describe, expect, it } from "vitest";
import { IdFieldGuess, idLikeName } from "../../../src/engine/objects/id-guess.js";

const guessOf = (objects: Record<string, unknown>[]) => {
  const guess = new IdFieldGuess();
  for (const object of objects) guess.add(object as never);
  return guess.best();
};

describe("idLikeName", () => {
  it.each(["sku", "SKU", "_id", "uuid", "guid", "key", "slug", "product_id", "productId", "product-id", "ID", "Id", "isbn", "item_sku"])("%s names an id", (name) => {
    expect(idLikeName(name)).toBe(true);
  });
  it.each(["title", "body", "price", "grid", "idea", "valid", "monkey", "code", "identity", "said", "paid", "", "x".repeat(65)])("%j does not", (name) => {
    expect(idLikeName(name)).toBe(false);
  });
});

describe("IdFieldGuess", () => {
  it("names a field in every object, each value a unique word or whole number", () => {
    expect(guessOf([{ sku: "A-1", title: "x" }, { sku: "A-2", title: "y" }])).toBe("sku");
    expect(guessOf([{ product_id: 1 }, { product_id: 2 }])).toBe("product_id");
    expect(guessOf([{ _id: "5f1" }])).toBe("_id"); // one object is enough
  });

  it("prefers a plain id name to a suffixed one, then the shorter", () => {
    expect(guessOf([{ product_id: 1, sku: "a" }, { product_id: 2, sku: "b" }])).toBe("sku");
    expect(guessOf([{ uuid: "u1", slug: "s1" }])).toBe("slug");
  });

  it.each([
    ["a value twice", [{ sku: "a" }, { sku: "a" }]],
    ["missing from one object", [{ sku: "a" }, { title: "b" }]],
    ["missing from the first object", [{ title: "b" }, { sku: "a" }]],
    ["a sentence", [{ key: "the key to the door" }]],
    ["a fraction", [{ sku: 1.5 }]],
    ["an empty string", [{ sku: "" }]],
    ["an object", [{ sku: { a: 1 } }]],
    ["null", [{ sku: null }]],
    ["a name that is not an id's", [{ title: "a" }, { title: "b" }]],
  ])("names nothing for %s", (_name, objects) => {
    expect(guessOf(objects)).toBeNull();
  });

  it("names nothing when it took no object", () => {
    expect(new IdFieldGuess().best()).toBeNull();
  });
});
