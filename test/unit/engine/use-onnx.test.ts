import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadUniversalSentenceEncoder } from "../../../src/engine/embedding/use.js";
import { waitFor } from "../../helpers/wait.js";

const reference = JSON.parse(readFileSync(new URL("../../../fixtures/use-reference/vectors.json", import.meta.url), "utf8")) as { texts: string[]; vectors: number[][] };

function farthest(actual: Float32Array[], expected: number[][]): { maxDiff: number; minCosine: number } {
  let maxDiff = 0;
  let minCosine = 1;
  actual.forEach((vector, i) => {
    const want = expected[i] as number[];
    let dot = 0;
    vector.forEach((x, d) => {
      maxDiff = Math.max(maxDiff, Math.abs(x - (want[d] as number)));
      dot += x * (want[d] as number);
    });
    minCosine = Math.min(minCosine, dot);
  });
  return { maxDiff, minCosine };
}

const compiledFiles = (dir: string) => readdirSync(path.join(dir, "compiled")).filter((name) => name.endsWith(".ort"));

describe("the bundled model on onnxruntime", () => {
  const saved = process.env.SEMSEARCH_MODELS;
  let models: string;
  beforeAll(() => {
    models = mkdtempSync(path.join(tmpdir(), "semsearch-use-"));
    process.env.SEMSEARCH_MODELS = models;
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.SEMSEARCH_MODELS;
    else process.env.SEMSEARCH_MODELS = saved;
  });

  it("gives TensorFlow.js's vectors (converted in memory, then from the compiled copy it saved)", async () => {
    const converted = await loadUniversalSentenceEncoder();
    expect(farthest(await converted.embedTexts(reference.texts), reference.vectors).maxDiff).toBeLessThan(2e-6);
    await converted.dispose();
    expect(compiledFiles(models)).toHaveLength(1);

    const compiled = await loadUniversalSentenceEncoder();
    const { maxDiff, minCosine } = farthest(await compiled.embedTexts(reference.texts), reference.vectors);
    expect(maxDiff).toBeLessThan(2e-6);
    expect(minCosine).toBeGreaterThan(0.99999);
    await compiled.dispose();
  });

  it("a damaged compiled copy is replaced, and the model still loads", async () => {
    const [name] = compiledFiles(models);
    const file = path.join(models, "compiled", name as string);
    const size = statSync(file).size;
    writeFileSync(file, "not a model");
    const model = await loadUniversalSentenceEncoder();
    expect(farthest(await model.embedTexts(reference.texts.slice(0, 3)), reference.vectors).maxDiff).toBeLessThan(2e-6);
    await model.dispose();
    expect(statSync(file).size).toBe(size);
    expect(readdirSync(path.join(models, "compiled")).filter((entry) => entry.includes(".tmp-"))).toEqual([]);
  });

  it("a directory or a FIFO where the compiled copy belongs is replaced, not read or waited on", async () => {
    const [name] = compiledFiles(models);
    const file = path.join(models, "compiled", name as string);
    for (const make of [() => mkdirSync(path.join(file, "inside"), { recursive: true }), () => execFileSync("mkfifo", [file])]) {
      rmSync(file, { recursive: true, force: true });
      make();
      const model = await loadUniversalSentenceEncoder();
      expect(farthest(await model.embedTexts(reference.texts.slice(0, 2)), reference.vectors).maxDiff).toBeLessThan(2e-6);
      await model.dispose();
      expect(statSync(file).isFile()).toBe(true);
    }
  });

  it("temporary files of writers that died are swept; a live writer's are left", async () => {
    const dir = path.join(models, "compiled");
    const [name] = compiledFiles(models);
    const dead = spawnSync(process.execPath, ["-e", "process.pid"]).pid as number; // ended: its pid is free
    const deadFile = path.join(dir, `${name}.tmp-${dead}-0badf00d`);
    const liveFile = path.join(dir, `${name}.tmp-1-0badf00d`); // pid 1 is always running
    writeFileSync(deadFile, "half a model");
    writeFileSync(liveFile, "half a model");
    const model = await loadUniversalSentenceEncoder();
    await model.dispose();
    // The sweep runs beside the load (it does not hold it up): wait for it to remove the dead writer's file.
    // It decides every file of the folder in one pass, so by then the live writer's has been spared (or,
    // were that a bug, its removal was started with the dead one's).
    await waitFor("the sweep to remove a dead writer's file", () => !existsSync(deadFile));
    expect(existsSync(liveFile)).toBe(true);
    rmSync(liveFile);
  });

  it("a models folder that cannot be written costs the cache, not the model", async () => {
    const blocker = path.join(models, "a-file");
    writeFileSync(blocker, "");
    process.env.SEMSEARCH_MODELS = path.join(blocker, "models");
    try {
      const model = await loadUniversalSentenceEncoder();
      expect(farthest(await model.embedTexts(reference.texts.slice(0, 2)), reference.vectors).maxDiff).toBeLessThan(2e-6);
      await model.dispose();
    } finally {
      process.env.SEMSEARCH_MODELS = models;
    }
  });
});
