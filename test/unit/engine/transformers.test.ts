/**
 * The Hugging Face provider on the generated tiny models (real tokenizer, real ONNX graphs through
 * onnxruntime-node): pooling, prefixes, windows for long texts, batching, and which runtimes load.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/embedding/registry.js";
import type { ModelSpec } from "../../../src/engine/embedding/model-spec.js";
import { resolveModelSpec } from "../../../src/engine/models.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const TINY_MEAN = path.join(ROOT, "fixtures", "models", "tiny-mean");
const TINY_CLS = path.join(ROOT, "fixtures", "models", "tiny-cls");

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}

describe("Hugging Face models (tiny fixtures)", () => {
  it("reads a folder's settings: q8 where offered, the pooling it states, its window and hidden size", async () => {
    expect(await resolveModelSpec(TINY_MEAN)).toMatchObject({ source: "folder", dtype: "q8", pooling: "mean", window: 64, dimension: 32 });
    expect(await resolveModelSpec(TINY_MEAN, { dtype: "fp32" })).toMatchObject({ dtype: "fp32", weights: { file: "onnx/model.onnx" } });
    expect(await resolveModelSpec(TINY_CLS)).toMatchObject({ dtype: "fp32", pooling: "cls" });
    await expect(resolveModelSpec(TINY_CLS, { dtype: "q8" })).rejects.toMatchObject({ code: "MODEL_UNSUPPORTED" });
  });

  it.each([
    ["mean", TINY_MEAN],
    ["cls", TINY_CLS],
  ])("%s pooling: unit vectors, synonyms close, the same alone or batched with longer texts", async (_, folder) => {
    const model = await loadModel(await resolveModelSpec(folder, { dtype: "fp32" }));
    const texts = ["a cheap car", "the physician saw a patient at the clinic", "automobile", "waves on the beach by the sea and the tide"];
    const batch = await model.embedTexts(texts);
    for (const vector of batch) expect(Math.sqrt(dot(vector, vector))).toBeCloseTo(1, 4);
    const [car, doctor, automobile, sea] = batch as [Float32Array, Float32Array, Float32Array, Float32Array];
    expect(dot(automobile, car)).toBeGreaterThan(dot(automobile, doctor) + 0.3);
    expect(dot(automobile, car)).toBeGreaterThan(dot(automobile, sea) + 0.3);
    const [alone] = await model.embedTexts(["a cheap car"]);
    expect(dot(alone as Float32Array, car)).toBeGreaterThan(0.9999);
  });

  it("embeds a text longer than the window in windows, not cut: what comes after the window counts", async () => {
    const model = await loadModel(await resolveModelSpec(TINY_MEAN, { dtype: "fp32" }));
    const filler = "the house has a kitchen and a room ".repeat(12); // about 100 tokens: past the 64-token window
    const [withDog, withCat, dog] = (await model.embedTexts([`${filler} dog puppy hound`, `${filler} cat kitten feline`, "dog"])) as Float32Array[];
    expect(dot(withDog as Float32Array, withCat as Float32Array)).toBeLessThan(0.999);
    expect(dot(withDog as Float32Array, dog as Float32Array)).toBeGreaterThan(dot(withCat as Float32Array, dog as Float32Array));
  });

  it("adds the recorded query and document prefixes", async () => {
    const base = await resolveModelSpec(TINY_MEAN, { dtype: "fp32" });
    const prefixed: ModelSpec = { ...base, query_prefix: "doctor ", document_prefix: "" };
    const model = await loadModel(prefixed);
    const [asQuery] = await model.embedTexts(["car"], "query");
    const [asDocument] = await model.embedTexts(["car"], "document");
    const [doctorCar] = await model.embedTexts(["doctor car"], "document");
    expect(dot(asQuery as Float32Array, doctorCar as Float32Array)).toBeGreaterThan(0.9999);
    expect(dot(asQuery as Float32Array, asDocument as Float32Array)).toBeLessThan(0.99);
  });

  it("gives an empty text a defined unit vector", async () => {
    const model = await loadModel(await resolveModelSpec(TINY_MEAN));
    const [empty] = await model.embedTexts([""]);
    expect(Math.sqrt(dot(empty as Float32Array, empty as Float32Array))).toBeCloseTo(1, 4);
  });
});

describe("runtimes load lazily", () => {
  /** Loads a model in a fresh Node process and reports which runtimes and native libraries it loaded. */
  function loadedBy(spec: "use" | "tiny"): { modules: string[]; libraries: string[] } {
    const script = `
      import { readFileSync } from "node:fs";
      import { createRequire } from "node:module";
      const { loadModel, BUNDLED_SPEC } = await import(${JSON.stringify(path.join(ROOT, "dist", "engine", "embedding", "registry.js"))});
      const { resolveModelSpec } = await import(${JSON.stringify(path.join(ROOT, "dist", "engine", "models.js"))});
      const spec = ${JSON.stringify(spec)} === "use" ? BUNDLED_SPEC : await resolveModelSpec(${JSON.stringify(TINY_MEAN)});
      await (await loadModel(spec)).embedTexts(["hello"]);
      const modules = Object.keys(createRequire(import.meta.url).cache);
      const libraries = readFileSync("/proc/self/maps", "utf8").split("\\n").map((line) => line.split(/\\s+/)[5] ?? "").filter(Boolean);
      process.stdout.write(JSON.stringify({ modules, libraries: [...new Set(libraries)] }));
    `;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", cwd: ROOT });
    expect(run.status, run.stderr).toBe(0);
    return JSON.parse(run.stdout) as { modules: string[]; libraries: string[] };
  }

  it("a bundled-model index runs onnxruntime itself, never loading transformers.js or sharp", () => {
    const { modules, libraries } = loadedBy("use");
    expect(modules.filter((m) => /@huggingface/.test(m))).toEqual([]);
    expect(libraries.some((l) => l.includes("onnxruntime"))).toBe(true);
    expect(libraries.filter((l) => /sharp|vips/.test(l))).toEqual([]);
  });

  it("a Hugging Face index never loads sharp's native image library", () => {
    const { modules, libraries } = loadedBy("tiny");
    expect(modules.some((m) => m.includes("@huggingface/transformers"))).toBe(true);
    expect(libraries.some((l) => l.includes("onnxruntime"))).toBe(true);
    expect(libraries.filter((l) => /sharp|vips/.test(l))).toEqual([]);
  });
});
