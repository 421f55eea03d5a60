import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(path.join(dir, entry.name)) : entry.name.endsWith(".ts") ? [path.join(dir, entry.name)] : [],
  );
}

function imports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:from\s+|import\(\s*|require\(\s*)["']([^"']+)["']/g)].map((m) => m[1] as string);
}

const engineFiles = files("src/engine");
const cliFiles = files("src/cli");
const serverFiles = files("src/server");

describe("dependency direction", () => {
  it("the engine never imports the CLI or its libraries", () => {
    for (const file of engineFiles) {
      for (const spec of imports(file)) {
        expect(spec, file).not.toMatch(/^(commander|@clack\/prompts|chalk|cli-table3|hono|@hono\/node-server)$|\/(cli|server)\//);
      }
    }
  });

  it("the CLI imports the engine only through its façade", () => {
    for (const file of cliFiles) {
      for (const spec of imports(file).filter((s) => s.includes("engine/"))) {
        expect(spec, file).toMatch(/engine\/index\.js$/);
      }
    }
  });

  it("the server imports the engine only through its façade, and never the CLI", () => {
    for (const file of serverFiles) {
      for (const spec of imports(file)) {
        expect(spec, file).not.toMatch(/\/cli\/|^(commander|@clack\/prompts|chalk|cli-table3)$/);
        if (spec.includes("engine/")) expect(spec, file).toMatch(/engine\/index\.js$/);
      }
    }
  });

  it("the search page's code (src/ui, run in a browser) imports only its own modules", () => {
    for (const file of files("src/ui")) {
      for (const spec of imports(file)) expect(spec, file).toMatch(/^\.\/[a-z-]+\.js$/);
    }
  });

  it.each([
    ["hono", "src/server/app.ts"],
    ["@hono/node-server", "src/server/serve.ts"],
    ["@valibot/to-json-schema", "src/server/openapi.ts"],
    ["@lancedb/lancedb", "src/engine/store/lancedb.ts"],
    ["apache-arrow", "src/engine/store/lancedb.ts"],
    ["onnxruntime-node", "src/engine/embedding/use.ts"],
    ["@huggingface/transformers", "src/engine/embedding/transformers.ts"],
    ["sharp", "src/engine/images/decode.ts"],
    ["@aws-sdk/client-s3", "src/engine/state/s3-store.ts"],
  ])("%s has one importer", (dependency, owner) => {
    const importers = [...engineFiles, ...cliFiles, ...serverFiles].filter((file) => imports(file).includes(dependency));
    expect(importers).toEqual([owner]);
  });

  // The control plane's records go through the state store port, so that one protocol runs on a
  // local directory and on a bucket: only the local side reads or writes files.
  it("in state/, only the local store touches the file system", () => {
    for (const file of files("src/engine/state").filter((f) => !f.endsWith("local-store.ts"))) {
      for (const spec of imports(file)) expect(spec, file).not.toMatch(/^node:fs|lancedb/);
    }
  });

  it("in the store, only local-files.ts reads the local file system (checks a database in an object store skips)", () => {
    const readers = files("src/engine/store").filter((file) => imports(file).some((spec) => /^(node:)?fs(\/promises)?$/.test(spec)));
    expect(readers).toEqual(["src/engine/store/local-files.ts"]);
  });

  it("the pure rules touch no fs, clock or model", () => {
    for (const file of [...files("src/engine/search").filter((f) => !/(search|rank)\.ts$/.test(f)), "src/engine/config.ts", "src/engine/store/rows.ts", "src/engine/fields.ts", "src/engine/field-types.ts", "src/engine/filter-fields.ts", "src/engine/indexing/extract.ts", "src/engine/objects/parse.ts", "src/engine/embedding/pooling.ts", "src/engine/embedding/model-spec.ts", "src/engine/embedding/known-models.ts", "src/engine/embedding/folder-facts.ts", "src/engine/images/preprocess-config.ts", "src/engine/images/sniff.ts", "src/engine/json-error.ts", "src/engine/content-issues.ts", "src/engine/location.ts"]) {
      for (const spec of imports(file)) expect(spec, file).not.toMatch(/^node:|lancedb|embedding\/(?!model-spec\.js$)|^\.\/(use|transformers|registry|pool)\.js$/);
      expect(readFileSync(file, "utf8"), file).not.toMatch(/Date\.now|new Date\(/);
    }
  });
});
