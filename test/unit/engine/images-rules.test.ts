/** The pure rules of image indexes: which values are images, objects ranked by their best image, image highlights, terminals' inline images. */
import { describe, expect, it } from "vitest";
import { parseCreateIndexBody } from "../../../src/engine/config.js";
import { imageValues, looksLikeImage, searchableText, segmentableFields } from "../../../src/engine/indexing/extract.js";
import { bestPerObject } from "../../../src/engine/search/rank.js";
import { imageHighlights } from "../../../src/engine/search/highlights.js";
import { chooseDtype, filesFor, modelKind } from "../../../src/engine/embedding/hub.js";
import { inlineImage, inlineProtocol } from "../../../src/cli/render/inline-image.js";
import { indexBodyFromFlags } from "../../../src/cli/index-body.js";

const imageConfig = (fields?: object) => parseCreateIndexBody({ configuration: { index_type: { name: "image", highlights: { text: true } }, ...(fields ? { fields } : {}) } }).configuration;
const textConfig = () => parseCreateIndexBody({ configuration: { index_type: { name: "text" } } }).configuration;

describe("looksLikeImage", () => {
  it.each([
    ["https://example.com/a/cat.jpg", true],
    ["http://example.com/cat.PNG?size=large#x", true],
    ["https://example.com/photo%2Ejpg", true],
    ["file:///srv/pics/a.webp", true],
    ["pics/a.gif", true],
    ["./a b/c.tiff", true],
    ["/abs/x.avif", true],
    ["C:\\pics\\a.jpeg", true],
    ["https://example.com/article", false],
    ["https://example.com/", false],
    ["ftp://example.com/a.jpg", false],
    ["javascript:alert(1)//.png", false],
    ["data:image/png;base64,AAAA.png", false],
    ["I like cats.jpg and dogs", false],
    [" pics/a.png", false],
    ["pics/a.png\n", false],
    ["a\u0000.png", false],
    ["", false],
    [".png", false], // a dotfile named ".png": no name before the extension (as looksLikeImageReference rules)
    ["x".repeat(5000) + ".png", false],
    ["constructor", false],
    ["__proto__.png", true],
  ])("%j → %s", (value, expected) => {
    expect(looksLikeImage(value)).toBe(expected);
  });
});

describe("imageValues and the text of an image index", () => {
  const object = {
    id: "o1",
    title: "A red car",
    photo: "pics/car.jpg",
    gallery: ["https://cdn.example.com/1.png", "not an image", "https://cdn.example.com/2"],
    link: "https://example.com/page",
    nested: { thumb: "t.webp" },
    constructor: "c.png",
  };

  it("finds image references by their look, in the object's order, at any depth", () => {
    expect(imageValues(object, imageConfig())).toEqual([
      { field: "photo", position: 0, value: "pics/car.jpg" },
      { field: "gallery", position: 1, value: "https://cdn.example.com/1.png" },
      { field: "nested.thumb", position: 2, value: "t.webp" },
      { field: "constructor", position: 3, value: "c.png" },
    ]);
  });

  it("takes every string of a declared image field, whatever it looks like", () => {
    const values = imageValues(object, imageConfig({ images: ["gallery"] })).map((image) => image.value);
    expect(values).toEqual(["pics/car.jpg", "https://cdn.example.com/1.png", "not an image", "https://cdn.example.com/2", "t.webp", "c.png"]);
  });

  it("keeps image references out of the searchable text and of text highlight segments", () => {
    expect(searchableText(object, imageConfig())).toBe("A red car\nnot an image\nhttps://cdn.example.com/2\nhttps://example.com/page");
    expect(segmentableFields(object, imageConfig()).map((field) => field.field)).toEqual(["title", "link"]);
  });

  it("follows the searchable rules, and finds no images in a text index", () => {
    expect(imageValues(object, imageConfig({ searchable: { deny: ["gallery", "nested"] } })).map((image) => image.field)).toEqual(["photo", "constructor"]);
    expect(imageValues(object, textConfig())).toEqual([]);
    expect(searchableText(object, textConfig())).toContain("pics/car.jpg");
  });

  it("refuses image fields outside image indexes, and ones that are not searchable", () => {
    expect(() => parseCreateIndexBody({ configuration: { index_type: { name: "text" }, fields: { images: ["photo"] } } })).toThrow(/fields\.images\.0: image fields are for image indexes/);
    expect(() => imageConfig({ images: ["photo"], searchable: { deny: ["photo"] } })).toThrow(/"photo" is not a searchable field/);
    expect(() => imageConfig({ images: ["a..b"] })).toThrow(/malformed field path/);
  });

  it("comes from --image-fields", () => {
    expect(indexBodyFromFlags({ type: "image", imageFields: ["photo", "gallery"] }).configuration).toEqual({ index_type: { name: "image" }, fields: { images: ["photo", "gallery"] } });
  });
});

describe("bestPerObject", () => {
  it("scores each object by its best image, best first", () => {
    const parts = [
      { object_id: "a", score: 0.2 },
      { object_id: "b", score: 0.5 },
      { object_id: "a", score: 0.7 },
      { object_id: "c", score: -0.1 },
      { object_id: "b", score: 0.1 },
    ];
    expect(bestPerObject(parts)).toEqual([
      { id: "a", score: 0.7 },
      { id: "b", score: 0.5 },
      { id: "c", score: -0.1 },
    ]);
    expect(bestPerObject([])).toEqual([]);
  });
});

describe("imageHighlights", () => {
  const hits = [
    { objectId: "a", position: 0, identifier: "a0.png", score: 0.1 },
    { objectId: "a", position: 1, identifier: "a1.png", score: 0.3 },
    { objectId: "b", position: 0, identifier: "b0.png", score: 0.2 },
    { objectId: "x", position: 0, identifier: "x.png", score: 0.9 },
  ];

  it("gives each page object its images best first, as stored, and nothing to objects without images", () => {
    const out = imageHighlights(["b", "a", "none"], hits);
    expect(out.get("a")).toEqual([
      { reference_type: "image", media_identifier: "a1.png" },
      { reference_type: "image", media_identifier: "a0.png" },
    ]);
    expect(out.get("b")).toEqual([{ reference_type: "image", media_identifier: "b0.png" }]);
    expect(out.get("none")).toEqual([]);
    expect(out.has("x")).toBe(false);
  });

  it("stops at the budget (250 highlights a search), in page order", () => {
    const out = imageHighlights(["b", "a"], hits, 2);
    expect(out.get("b")).toHaveLength(1);
    expect(out.get("a")).toEqual([{ reference_type: "image", media_identifier: "a1.png" }]);
    expect(imageHighlights(["a"], hits, 0).get("a")).toEqual([]);
  });
});

describe("CLIP models on the hub", () => {
  const listing = (paths: string[]) => ({ id: "o/clip", revision: "r", files: paths.map((p) => ({ path: p, size: 1, sha256: "0".repeat(64) })) });
  const clipFiles = ["config.json", "tokenizer.json", "tokenizer_config.json", "preprocessor_config.json", "onnx/text_model.onnx", "onnx/vision_model.onnx", "onnx/text_model_quantized.onnx", "onnx/vision_model_quantized.onnx", "onnx/model.onnx"];
  const has = (paths: string[]) => (file: string) => paths.includes(file);

  it("are told by their two towers", () => {
    expect(modelKind(has(clipFiles))).toBe("clip");
    expect(modelKind(has(["onnx/model.onnx", "onnx/text_model.onnx"]))).toBe("text");
  });

  it("take q8 only when both towers have it", () => {
    expect(chooseDtype(has(clipFiles), undefined, "clip")).toBe("q8");
    expect(chooseDtype(has(clipFiles.filter((f) => f !== "onnx/vision_model_quantized.onnx")), undefined, "clip")).toBe("fp32");
    expect(chooseDtype(has(["onnx/text_model.onnx"]), "fp32", "clip")).toBeNull();
  });

  it("download both towers and the image preprocessing", () => {
    const files = filesFor(listing(clipFiles), "q8", "clip").map((file) => file.path);
    expect(files).toEqual(["config.json", "tokenizer.json", "tokenizer_config.json", "preprocessor_config.json", "onnx/text_model_quantized.onnx", "onnx/vision_model_quantized.onnx"]);
    expect(() => filesFor(listing(clipFiles.filter((f) => f !== "preprocessor_config.json")), "q8", "clip")).toThrow(/has no preprocessor_config\.json/);
  });
});

describe("inline images", () => {
  it("are shown only in terminals that speak a protocol, or when forced", () => {
    expect(inlineProtocol({ TERM: "xterm-kitty" })).toBe("kitty");
    expect(inlineProtocol({ KITTY_WINDOW_ID: "1", TERM: "xterm-256color" })).toBe("kitty");
    expect(inlineProtocol({ TERM_PROGRAM: "iTerm.app" })).toBe("iterm");
    expect(inlineProtocol({ TERM_PROGRAM: "WezTerm" })).toBe("iterm");
    expect(inlineProtocol({ TERM: "xterm-256color" })).toBeNull();
    expect(inlineProtocol({ TERM: "xterm-kitty", SEMSEARCH_INLINE_IMAGES: "0" })).toBeNull();
    expect(inlineProtocol({ SEMSEARCH_INLINE_IMAGES: "iterm" })).toBe("iterm");
  });

  it("send kitty payloads in chunks of at most 4,096 characters, the last one closing", () => {
    const png = Buffer.alloc(7000, 7);
    const out = inlineImage(png, "kitty", 20);
    const chunks = [...out.matchAll(/\u001b_G([^;]*);([^\u001b]*)\u001b\\/g)];
    expect(chunks.length).toBe(Math.ceil(Buffer.from(png).toString("base64").length / 4096));
    expect(chunks[0]?.[1]).toBe("a=T,f=100,q=2,c=20,m=1");
    expect(chunks.at(-1)?.[1]).toBe("m=0");
    expect(chunks.every((chunk) => (chunk[2] as string).length <= 4096)).toBe(true);
    expect(chunks.map((chunk) => chunk[2]).join("")).toBe(png.toString("base64"));
  });

  it("send iTerm2 images in one sequence", () => {
    expect(inlineImage(Buffer.from("png"), "iterm", 12)).toBe(`\u001b]1337;File=inline=1;size=3;width=12;preserveAspectRatio=1:${Buffer.from("png").toString("base64")}\u0007\n`);
  });
});
