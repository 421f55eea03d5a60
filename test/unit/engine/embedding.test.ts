import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BUNDLED_SPEC, loadModel } from "../../../src/engine/embedding/registry.js";

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] as number) * (b[i] as number);
  return dot;
}

const texts = ["Cats purr when they are content.", "Kittens are young cats.", "Interest rates rose again this year.", ""];

describe("bundled Universal Sentence Encoder", () => {
  it("gives unit vectors of 512 dimensions, the same alone or in a batch", async () => {
    const model = await loadModel(BUNDLED_SPEC);
    const batch = await model.embedTexts(texts);
    expect(batch).toHaveLength(texts.length);
    for (const vector of batch) {
      expect(vector).toHaveLength(512);
      expect(Math.sqrt(cosine(vector, vector))).toBeCloseTo(1, 4);
    }
    const [alone] = await model.embedTexts([texts[1] as string]);
    expect(cosine(alone as Float32Array, batch[1] as Float32Array)).toBeCloseTo(1, 5);
  });

  it("puts related sentences closer than unrelated ones", async () => {
    const [cats, kittens, rates] = await (await loadModel(BUNDLED_SPEC)).embedTexts(texts.slice(0, 3));
    expect(cosine(cats as Float32Array, kittens as Float32Array)).toBeGreaterThan(cosine(cats as Float32Array, rates as Float32Array) + 0.1);
  });
});

describe("embedding pool", () => {
  it("returns vectors in input order, equal to the in-thread model's", async () => {
    // Threads run built JavaScript: the pool is taken from dist/ (`npm test` builds first).
    const built = new URL("../../../dist/engine/embedding/pool.js", import.meta.url).href;
    const { createEmbeddingPool } = (await import(built)) as typeof import("../../../src/engine/embedding/pool.js");
    const pool = createEmbeddingPool(BUNDLED_SPEC, 2);
    try {
      const many = Array.from({ length: 20 }, (_, i) => `sentence number ${i} about ${i % 2 ? "dogs" : "markets"}`);
      const pooled = await pool.embed(many);
      const direct = await (await loadModel(BUNDLED_SPEC)).embedTexts(many);
      expect(pooled).toHaveLength(many.length);
      pooled.forEach((vector, i) => expect(cosine(vector, direct[i] as Float32Array)).toBeCloseTo(1, 5));
    } finally {
      await pool.close();
    }
  });

  it("a one-shot process's query thread: stopping it while its model loads or runs, or leaving it idle, ends the process cleanly", () => {
    // onnxruntime aborts the process when a thread is stopped inside it (loading or running the model): the pool waits.
    const pool = new URL("../../../dist/engine/embedding/pool.js", import.meta.url).href;
    const registry = new URL("../../../dist/engine/embedding/registry.js", import.meta.url).href;
    for (const [wait, close] of [[0, true], [80, true], [250, true], [0, false], [80, false]] as const) {
      const script = `
        const { createThreadPool } = await import(${JSON.stringify(pool)});
        const { BUNDLED_SPEC } = await import(${JSON.stringify(registry)});
        const pool = createThreadPool(BUNDLED_SPEC, 1, { unrefIdle: true });
        // a long text keeps the thread inside onnxruntime for a while once its model is loaded
        const embedding = pool.embed(["words and more words ".repeat(2000)]).catch((error) => error.code);
        await new Promise((resolve) => setTimeout(resolve, ${wait}));
        if (${close}) await pool.close();
        const outcome = await embedding;
        process.stdout.write(Array.isArray(outcome) || outcome === "EMBEDDING_POOL_CLOSED" ? "done" : String(outcome));
      `;
      // A file, not --eval: threads inherit the process's flags, and --input-type would fail them.
      const file = path.join(mkdtempSync(path.join(tmpdir(), "semsearch-pool-")), "run.mjs");
      writeFileSync(file, script);
      const run = spawnSync(process.execPath, [file], { encoding: "utf8", timeout: 30_000 });
      expect({ wait, close, status: run.status, signal: run.signal, stdout: run.stdout, stderr: run.stderr }).toEqual({ wait, close, status: 0, signal: null, stdout: "done", stderr: "" });
    }
  });

  it("a thread started before its model is known (bin/semsearch, for a search): the first pool adopts it and embeds the same bits; unused or stopped, it lets the process end", () => {
    const pool = new URL("../../../dist/engine/embedding/pool.js", import.meta.url).href;
    const early = new URL("../../../dist/engine/embedding/early-thread.js", import.meta.url).href;
    const registry = new URL("../../../dist/engine/embedding/registry.js", import.meta.url).href;
    for (const use of ["adopt", "idle", "stop"] as const) {
      const script = `
        const { startEarlyThread, stopEarlyThread, takeEarlyThread } = await import(${JSON.stringify(early)});
        const { createThreadPool } = await import(${JSON.stringify(pool)});
        const { BUNDLED_SPEC } = await import(${JSON.stringify(registry)});
        startEarlyThread();
        if (${JSON.stringify(use)} === "adopt") {
          const adopted = createThreadPool(BUNDLED_SPEC, 1, { unrefIdle: true });
          const left = takeEarlyThread() === undefined ? "adopted" : "not adopted";
          const [a] = await adopted.embed(["where do kittens sleep"], "query");
          const fresh = createThreadPool(BUNDLED_SPEC, 1, { unrefIdle: true });
          const [b] = await fresh.embed(["where do kittens sleep"], "query");
          process.stdout.write(left + " " + (Buffer.compare(Buffer.from(a.buffer), Buffer.from(b.buffer)) === 0 ? "same" : "different"));
        } else {
          if (${JSON.stringify(use)} === "stop") stopEarlyThread();
          process.stdout.write("done");
        }
      `;
      const file = path.join(mkdtempSync(path.join(tmpdir(), "semsearch-early-")), "run.mjs");
      writeFileSync(file, script);
      const run = spawnSync(process.execPath, [file], { encoding: "utf8", timeout: 30_000 });
      expect({ use, status: run.status, signal: run.signal, stdout: run.stdout, stderr: run.stderr }).toEqual({ use, status: 0, signal: null, stdout: use === "adopt" ? "adopted same" : "done", stderr: "" });
    }
  });

  it("embeds a query to the same bits in a one-shot process (the CLI) as in a long-running one (a server)", async () => {
    // A search's output must not depend on whether a server answered it: query vectors that differed in
    // the seventh decimal (one thread loaded without weight prepacking) swapped near-tied results.
    const { EngineContext } = (await import(new URL("../../../dist/engine/context.js", import.meta.url).href)) as typeof import("../../../src/engine/context.js");
    const { Project } = (await import(new URL("../../../dist/engine/project.js", import.meta.url).href)) as typeof import("../../../src/engine/project.js");
    const dir = mkdtempSync(path.join(tmpdir(), "semsearch-query-bits-"));
    const oneShot = new EngineContext(new Project(dir), { oneShot: true });
    const longRunning = new EngineContext(new Project(dir));
    try {
      for (const query of ["where do kittens sleep", "0-dimensional biomaterials lack inductive properties", "interest rates"]) {
        expect(Array.from(await oneShot.embedQuery(BUNDLED_SPEC, query)), query).toEqual(Array.from(await longRunning.embedQuery(BUNDLED_SPEC, query)));
      }
    } finally {
      await oneShot.close();
      await longRunning.close();
    }
  });

  it("embeds a query with its role in a thread, as the in-thread model does", async () => {
    const built = new URL("../../../dist/engine/embedding/pool.js", import.meta.url).href;
    const { createThreadPool } = (await import(built)) as typeof import("../../../src/engine/embedding/pool.js");
    const pool = createThreadPool(BUNDLED_SPEC, 1, { unrefIdle: true });
    try {
      const [threaded] = await pool.embed(["where do kittens sleep"], "query");
      const [direct] = await (await loadModel(BUNDLED_SPEC)).embedTexts(["where do kittens sleep"], "query");
      expect(cosine(threaded as Float32Array, direct as Float32Array)).toBeCloseTo(1, 6);
    } finally {
      await pool.close();
    }
  });
});
