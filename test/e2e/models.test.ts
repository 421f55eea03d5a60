/**
 * Hugging Face models end to end through the real CLI, offline: the generated tiny models under
 * fixtures/models (their vocabulary has synonym groups, so rankings can be asserted), used from a
 * folder and downloaded from a local stand-in for the hub.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliJson, ROOT, runCli, tempProject } from "../helpers/cli.js";
import { startHub, type HubServer } from "../../src/torture/hub-server.js";
import { Terminal } from "../helpers/pty.js";
import { tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

const FIXTURES = path.join(ROOT, "fixtures", "models");

/** No word of a query below appears in the text of the object it should find: only vectors can find it. */
const objects = [
  { id: "car", category: "transport", body: "My sedan broke down on the highway and the truck driver helped." },
  { id: "doctor", category: "health", body: "The surgeon at the hospital told the nurse to watch the patient." },
  { id: "sea", category: "nature", body: "Waves rolled onto the beach as the tide came in from the ocean." },
  { id: "dog", category: "animals", body: "The puppy would bark and fetch the leash every morning." },
  { id: "food", category: "home", body: "We cooked pizza and bread for dinner in the kitchen." },
  { id: "money", category: "home", body: "The bank gave her a loan because her budget had cash to spare." },
];

function jsonl(items: object[]): string {
  return items.map((item) => JSON.stringify(item)).join("\n") + "\n";
}

interface SearchResponse {
  results: { id: string; highlights?: { highlight: { text: string } }[] }[];
  pagination: { statistics: { total: number } };
}

async function setUp(model: string, extra: string[] = [], env: Record<string, string> = {}): Promise<{ project: string; id: string }> {
  const project = tempProject();
  await cliJson(project, ["objects", "add", "-"], { input: jsonl(objects), env });
  const { id } = await cliJson<{ id: string }>(project, ["index", "create", "--model", model, "--searchable", "body", "--filterable", "category", ...extra, "--wait"], { env });
  return { project, id };
}

function errorOf(stderr: string): { code: string; message: string; hint?: string } {
  return JSON.parse(stderr.trim().split("\n").at(-1) as string).errors[0];
}

describe("a model folder", () => {
  let folder = "";
  let project = "";
  let id = "";

  beforeAll(async () => {
    folder = path.join(tempDir(), "tiny-mean");
    cpSync(path.join(FIXTURES, "tiny-mean"), folder, { recursive: true });
    ({ project, id } = await setUp(folder, ["--highlights"]));
  });

  it("is recorded in the index with everything needed to embed queries the same way", async () => {
    const index = await cliJson(project, ["index", "get", id]);
    expect(index.model).toBe(folder);
    expect(index.dimension).toBe(32);
    expect(index.embedding).toMatchObject({ id: folder, source: "folder", dtype: "q8", pooling: "mean", window: 64, dimension: 32, weights: { file: "onnx/model_quantized.onnx" } });
    expect(index.embedding.weights.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(index.embedding.tokenizer_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(index.state).toBe("READY");
    expect(index.status.READY).toBe(objects.length);
  });

  it.each([
    ["automobile", "car"],
    ["physician", "doctor"],
    ["seawater", "sea"],
    ["canine", "dog"],
    ["meal", "food"],
    ["currency", "money"],
  ])("neural search for %s finds %s first, with no word in common", async (query, expected) => {
    const response = await cliJson<SearchResponse>(project, ["search", id, query, "--mode", "vector"]);
    expect(response.results[0]?.id).toBe(expected);
  });

  it("hybrid search ranks the meaning match first when no word matches", async () => {
    const response = await cliJson<SearchResponse>(project, ["search", id, "automobile"]);
    expect(response.results[0]?.id).toBe("car");
  });

  it("filters and highlights work with the model", async () => {
    const filtered = await cliJson<SearchResponse>(project, ["search", id, "physician", "--filter", "category:home", "--result-fields", "highlights", "--object-fields", "*"]);
    expect(filtered.results.map((result) => result.id).sort()).toEqual(["food", "money"]);
    const highlighted = await cliJson<SearchResponse>(project, ["search", id, "physician", "--result-fields", "highlights"]);
    expect(highlighted.results[0]?.id).toBe("doctor");
    expect(highlighted.results[0]?.highlights?.[0]?.highlight.text).toContain("surgeon");
  });

  it("fails a search with MODEL_MISSING (exit 6) when the folder is gone, and works again when it is back", async () => {
    renameSync(folder, `${folder}.away`);
    try {
      const result = await runCli(["--project", project, "--json", "search", id, "automobile"]);
      expect(result.exitCode).toBe(6);
      expect(errorOf(result.stderr)).toMatchObject({ code: "MODEL_MISSING" });
      expect(result.stdout).toBe("");
    } finally {
      renameSync(`${folder}.away`, folder);
    }
    expect((await cliJson<SearchResponse>(project, ["search", id, "automobile"])).results[0]?.id).toBe("car");
  });

  it("fails a search with MODEL_CHANGED (exit 6) when the tokenizer was replaced, even with the same weights", async () => {
    const tokenizer = path.join(folder, "tokenizer.json");
    const original = readFileSync(tokenizer);
    writeFileSync(tokenizer, readFileSync(path.join(FIXTURES, "tiny-cls", "tokenizer.json"), "utf8").replace('"car"', '"kar"'));
    try {
      const result = await runCli(["--project", project, "--json", "search", id, "automobile"]);
      expect(result.exitCode).toBe(6);
      expect(errorOf(result.stderr)).toMatchObject({ code: "MODEL_CHANGED" });
      expect(errorOf(result.stderr).message).toContain("tokenizer");
    } finally {
      writeFileSync(tokenizer, original);
    }
    expect((await cliJson<SearchResponse>(project, ["search", id, "automobile"])).results[0]?.id).toBe("car");
  });

  it("fails a search with MODEL_CHANGED (exit 6) when the weights were swapped, never embedding with other weights", async () => {
    const weights = path.join(folder, "onnx", "model_quantized.onnx");
    const original = readFileSync(weights);
    writeFileSync(weights, readFileSync(path.join(FIXTURES, "tiny-cls", "onnx", "model.onnx")));
    try {
      const result = await runCli(["--project", project, "--json", "search", id, "automobile"]);
      expect(result.exitCode).toBe(6);
      expect(errorOf(result.stderr)).toMatchObject({ code: "MODEL_CHANGED" });
      // The worker refuses too: an object added now stays pending instead of getting other vectors,
      // and the wait ends at once with the reason; the index says it is blocked.
      // The worker that built the index has the old weights loaded: wait until it has exited.
      await waitFor("the worker that built the index to exit", async () => !(await cliJson(project, ["worker", "status"])).running);
      const added = await runCli(["--project", project, "--json", "objects", "add", "-", "--wait", "--timeout", "60"], { input: jsonl([{ id: "late", body: "a new car" }]) });
      expect(added.exitCode).toBe(6);
      expect(errorOf(added.stderr).code).toBe("MODEL_CHANGED");
      const blocked = await cliJson(project, ["index", "get", id]);
      expect(blocked.state).toBe("BUILDING");
      expect(blocked.blocked).toMatchObject({ code: "MODEL_CHANGED" });
    } finally {
      writeFileSync(weights, original);
    }
    // Once the weights are back, the next command's worker builds it.
    const index = await cliJson(project, ["index", "get", id, "--wait", "--timeout", "120"]);
    expect(index.status.READY).toBe(objects.length + 1);
    expect(index.blocked).toBeUndefined();
  });
});

describe("a sentence longer than the model's 64 positions, with highlights", () => {
  it("is one segment, embedded in windows, and its highlight is the whole sentence", async () => {
    // About 180 tokens in one sentence (no full stop inside): the tiny model takes 64, so the segment
    // is embedded in windows, as a whole object is; the cat words only at its end.
    const filler = "the bank gave money and cash for the budget of the house in the city, ".repeat(10);
    const long = `Every morning ${filler}and then the kitten would meow and purr with its whiskers in the garden.`;
    const segments = ["The weather was cold.", long, "We read a story."];
    const body = segments.join(" ");
    const project = tempProject();
    await cliJson(project, ["objects", "add", "-"], { input: jsonl([...objects, { id: "story", category: "home", body }]) });
    const folder = path.join(FIXTURES, "tiny-mean");
    const { id } = await cliJson<{ id: string }>(project, ["index", "create", "--model", folder, "--searchable", "body", "--highlights", "--wait"]);
    expect((await cliJson(project, ["index", "get", id])).status.READY).toBe(objects.length + 1);
    const response = await cliJson<{ results: { id: string; highlights?: { references: { position: { start_char: number; end_char: number } }[] }[] }[] }>(project, [
      "search", id, "kitten meow purr whiskers", "--result-fields", "highlights",
    ]);
    const spans = (response.results.find((result) => result.id === "story")?.highlights ?? []).map((h) => h.references[0]?.position);
    expect(spans.length).toBeGreaterThan(0);
    const start = body.indexOf(long);
    expect(spans).toContainEqual({ start_char: start, end_char: start + long.length });
  });
});

describe("a model that fails on some texts", () => {
  it("puts those objects in ERROR and indexes the rest; other indexes of the project go on", async () => {
    // The catalog is edited to promise a 512-token window the tiny model (64 positions) cannot take,
    // as a folder whose config lied would: texts longer than 64 tokens fail inside onnxruntime.
    const folder = path.join(tempDir(), "tiny-mean");
    cpSync(path.join(FIXTURES, "tiny-mean"), folder, { recursive: true });
    const project = tempProject();
    await cliJson(project, ["objects", "add", "-"], { input: jsonl(objects) });
    const { id } = await cliJson<{ id: string }>(project, ["index", "create", "--model", folder, "--searchable", "body", "--wait"]);
    const catalogFile = path.join(project, "catalog.json");
    const catalog = JSON.parse(readFileSync(catalogFile, "utf8"));
    catalog.indexes[0].embedding.window = 512;
    writeFileSync(catalogFile, JSON.stringify(catalog));
    const long = { id: "long", body: "the dog and the cat and the car ".repeat(40) };
    const added = await runCli(["--project", project, "--json", "objects", "add", "-", "--wait"], { input: jsonl([long, { id: "short", body: "a small puppy" }]) });
    expect(added.exitCode).toBe(7);
    const status = await cliJson(project, ["index", "status", id]);
    expect(status.status).toMatchObject({ READY: objects.length + 1, ERROR: 1 });
    const failed = await cliJson(project, ["objects", "get", "long"]);
    expect(failed.status.indexes[0]).toMatchObject({ status: "ERROR" });
    expect(failed.status.indexes[0].error).toMatch(/^embedding failed: .*onnxruntime failed to run the model on a window of \d+ tokens$/);
    // onnxruntime's own message names the graph's nodes, which are the model file's text: it is not shown
    expect(failed.status.indexes[0].error).not.toMatch(/Name:|\/embeddings\//);
    const other = await cliJson<{ id: string }>(project, ["index", "create", "--name", "other", "--searchable", "body", "--wait"]);
    expect((await cliJson(project, ["index", "get", other.id])).status.READY).toBe(objects.length + 2);
  });
});

describe("errors about a damaged model folder", () => {
  // Each case damages one file of a temporary copy of a tiny model with text marked SECRET: the error
  // names the file and the place or the reason, and never quotes the file (a model folder may be any
  // file on disk, and errors reach HTTP clients and logs).
  const SECRET = "SECRET-CONTENT";
  const tinyOnnx = async (graph: { op?: string; irVersion?: number }) => {
    const { encodeOnnxModel, OnnxType } = await import("../../src/engine/embedding/onnx-proto.js");
    return encodeOnnxModel({
      irVersion: graph.irVersion ?? 8,
      opset: 18,
      producer: SECRET,
      graph: {
        name: SECRET,
        nodes: [{ op: graph.op ?? "Identity", inputs: ["input_ids"], outputs: ["last_hidden_state"] }],
        initializers: [],
        inputs: [{ name: "input_ids", type: OnnxType.INT64, dims: ["b", "s"] }, { name: "attention_mask", type: OnnxType.INT64, dims: ["b", "s"] }],
        outputs: [{ name: "last_hidden_state", type: OnnxType.FLOAT, dims: ["b", "s", 32] }],
      },
    });
  };
  const json = (file: string, change: (value: any) => void) => (folder: string) => {
    const value = JSON.parse(readFileSync(path.join(folder, file), "utf8"));
    change(value);
    writeFileSync(path.join(folder, file), JSON.stringify(value));
  };
  const text = (file: string, content: string) => (folder: string) => writeFileSync(path.join(folder, file), content);
  const project = tempProject();

  it.each<[string, "tiny-mean" | "tiny-clip", (folder: string) => void | Promise<void>, string, string]>([
    ["tokenizer.json that is not JSON", "tiny-mean", text("tokenizer.json", `${SECRET}{"model": 1}`), "MODEL_UNREADABLE", "tokenizer.json is not valid JSON (line 1, column 1)"],
    ["tokenizer.json cut short", "tiny-mean", text("tokenizer.json", `{"version": "1.0", "${SECRET}": [1, 2`), "MODEL_UNREADABLE", "tokenizer.json is not valid JSON (it ends early, at line 1)"],
    ["tokenizer.json with an unknown normalizer", "tiny-mean", json("tokenizer.json", (t) => (t.normalizer = { type: SECRET })), "MODEL_UNREADABLE", "its tokenizer (tokenizer.json, tokenizer_config.json) cannot be loaded"],
    ["tokenizer.json with an unknown pre-tokenizer", "tiny-mean", json("tokenizer.json", (t) => (t.pre_tokenizer = { type: SECRET })), "MODEL_UNREADABLE", "its tokenizer (tokenizer.json, tokenizer_config.json) cannot be loaded"],
    ["config.json that is not JSON", "tiny-mean", text("config.json", `{\n  "hidden_size": 32,\n  "model_type": ${SECRET}\n}`), "MODEL_UNREADABLE", "config.json is not valid JSON (line 3, column 17)"],
    ["tokenizer_config.json that is not JSON", "tiny-mean", text("tokenizer_config.json", `[${SECRET}]`), "MODEL_UNREADABLE", "tokenizer_config.json is not valid JSON (line 1, column 2)"],
    ["1_Pooling/config.json that is not JSON", "tiny-mean", text("1_Pooling/config.json", `{"${SECRET}" 1}`), "MODEL_UNREADABLE", "config.json is not valid JSON (line 1, column 19)"],
    ["weights with an operator onnxruntime does not know", "tiny-mean", async (folder) => writeFileSync(path.join(folder, "onnx", "model_quantized.onnx"), await tinyOnnx({ op: SECRET.replace("-", "") })), "MODEL_UNREADABLE", "its model (onnx/model_quantized.onnx, config.json) cannot be loaded"],
    ["weights of an IR version onnxruntime does not read", "tiny-mean", async (folder) => writeFileSync(path.join(folder, "onnx", "model_quantized.onnx"), await tinyOnnx({ irVersion: 99 })), "MODEL_UNREADABLE", "its model (onnx/model_quantized.onnx, config.json) cannot be loaded"],
    ["a CLIP config.json with an unknown model_type", "tiny-clip", json("config.json", (c) => (c.model_type = SECRET)), "MODEL_UNSUPPORTED", "the model_type in its config.json is not one semsearch runs"],
    ["a CLIP preprocessor_config.json with a bad value", "tiny-clip", json("preprocessor_config.json", (c) => (c.do_resize = SECRET)), "MODEL_UNSUPPORTED", "preprocessor_config.json: do_resize: expected boolean"],
    ["a CLIP preprocessor_config.json that is not JSON", "tiny-clip", text("preprocessor_config.json", `{"size": ${SECRET}}`), "MODEL_UNREADABLE", "preprocessor_config.json is not valid JSON (line 1, column 10)"],
    ["a CLIP tokenizer.json that is not JSON", "tiny-clip", text("tokenizer.json", `${SECRET}`), "MODEL_UNREADABLE", "tokenizer.json is not valid JSON (line 1, column 1)"],
  ])("%s (%s): names the file, quotes none of it", async (_, fixture, damage, code, says) => {
    const folder = path.join(tempDir(), fixture);
    cpSync(path.join(FIXTURES, fixture), folder, { recursive: true });
    await damage(folder);
    const result = await runCli(["--project", project, "--json", "index", "create", "--model", folder, ...(fixture === "tiny-clip" ? ["--type", "image"] : [])]);
    expect(result.exitCode, result.stderr).toBe(code === "MODEL_UNREADABLE" ? 6 : 4);
    expect(errorOf(result.stderr)).toMatchObject({ code });
    expect(errorOf(result.stderr).message).toContain(says);
    expect(result.stderr).not.toContain("SECRET");
  });
});

describe("CLS pooling from a folder's sentence-transformers settings", () => {
  it("uses the folder's 1_Pooling config, fp32 when that is all it has", async () => {
    const { project, id } = await setUp(path.join(FIXTURES, "tiny-cls"), ["--neural-only"]);
    const index = await cliJson(project, ["index", "get", id]);
    expect(index.embedding).toMatchObject({ pooling: "cls", dtype: "fp32", weights: { file: "onnx/model.onnx" } });
    const response = await cliJson<SearchResponse>(project, ["search", id, "physician"]);
    expect(response.results[0]?.id).toBe("doctor");
  });
});

describe("model names that are wrong", () => {
  const project = tempProject();

  it.each([
    ["minilm", 4, "UNKNOWN_MODEL"],
    ["./no/such/folder", 4, "UNKNOWN_MODEL"],
    [ROOT, 4, "MODEL_UNSUPPORTED"],
  ])("--model %s is exit %i %s, and creates nothing", async (model, exit, code) => {
    const result = await runCli(["--project", project, "--json", "index", "create", "--model", model]);
    expect(result.exitCode).toBe(exit);
    expect(errorOf(result.stderr).code).toBe(code);
    expect((await cliJson(project, ["index", "list"])).indexes).toEqual([]);
  });

  it("refuses a folder whose model does not run (damaged weights, a broken tokenizer), creating nothing", async () => {
    for (const [file, content] of [
      ["onnx/model_quantized.onnx", "not an ONNX graph"],
      ["tokenizer.json", "{\"version\": 1}"],
    ] as const) {
      const folder = path.join(tempDir(), "broken");
      cpSync(path.join(FIXTURES, "tiny-mean"), folder, { recursive: true });
      writeFileSync(path.join(folder, file), content);
      const result = await runCli(["--project", project, "--json", "index", "create", "--model", folder]);
      expect(result.exitCode, file).toBe(6);
      expect(errorOf(result.stderr), file).toMatchObject({ code: "MODEL_UNREADABLE" });
      expect((await cliJson(project, ["index", "list"])).indexes).toEqual([]);
    }
  });

  it("refuses a folder whose config promises a longer window than the model takes", async () => {
    const folder = path.join(tempDir(), "overstated");
    cpSync(path.join(FIXTURES, "tiny-mean"), folder, { recursive: true });
    for (const file of ["config.json", "tokenizer_config.json"]) {
      const json = JSON.parse(readFileSync(path.join(folder, file), "utf8"));
      if (file === "config.json") json.max_position_embeddings = 512;
      else json.model_max_length = 512;
      writeFileSync(path.join(folder, file), JSON.stringify(json));
    }
    const result = await runCli(["--project", project, "--json", "index", "create", "--model", folder]);
    expect(result.exitCode).toBe(6);
    expect(errorOf(result.stderr)).toMatchObject({ code: "MODEL_UNREADABLE" });
  });

  it("refuses weights that are not a regular file (a FIFO would hang a reader) at once", async () => {
    const folder = path.join(tempDir(), "fifo");
    cpSync(path.join(FIXTURES, "tiny-cls"), folder, { recursive: true });
    rmSync(path.join(folder, "onnx", "model.onnx"));
    spawnSync("mkfifo", [path.join(folder, "onnx", "model.onnx")]);
    const result = await runCli(["--project", project, "--json", "index", "create", "--model", folder], { timeoutMs: 30_000 });
    expect(result.exitCode).toBe(6);
    expect(errorOf(result.stderr)).toMatchObject({ code: "MODEL_UNREADABLE" });
    expect(errorOf(result.stderr).message).toContain("not a regular file");
  });

  it("shows control characters of a hostile name escaped in human output", async () => {
    const result = await runCli(["--project", project, "index", "create", "--model", "a/b\u001b[31mRED\u202e"]);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).not.toMatch(/[\u001b\u202e]/);
    expect(result.stderr).toContain("\\u{1b}[31mRED\\u{202e}");
  });

  it("suggests the known model nearest to a typo", async () => {
    const result = await runCli(["--project", project, "--json", "index", "create", "--model", "Xenova/bge-smal-en-v1.5"]);
    expect(result.exitCode).toBe(6); // a valid id: the hub is asked, and here it is a closed port
    const typo = await runCli(["--project", project, "index", "create", "--model", "bge-small-en-v1.5"]);
    expect(typo.exitCode).toBe(4);
    expect(typo.stderr).toContain("Xenova/bge-small-en-v1.5");
  });

  it("refuses a dtype the bundled model does not have, and an unknown dtype", async () => {
    const bundled = await runCli(["--project", project, "--json", "index", "create", "--model-dtype", "q8"]);
    expect(bundled.exitCode).toBe(4);
    const unknown = await runCli(["--project", project, "--json", "index", "create", "--model", "Xenova/all-MiniLM-L6-v2", "--model-dtype", "int4"]);
    expect(unknown.exitCode).toBe(4);
    expect(errorOf(unknown.stderr).message).toContain("model_dtype");
  });
});

describe("downloading from the hub", () => {
  let hub: HubServer;
  let models = "";
  const env = () => ({ SEMSEARCH_HF_ENDPOINT: hub.url, SEMSEARCH_MODELS: models, SEMSEARCH_DOWNLOAD_TIMEOUT: "3000" });
  const cached = () => path.join(models, "hub", "tiny", "mean", "0123456789abcdef0123456789abcdef01234567");

  beforeAll(async () => {
    hub = await startHub({ "tiny/mean": path.join(FIXTURES, "tiny-mean"), "tiny/cls": path.join(FIXTURES, "tiny-cls") });
  });
  afterAll(() => hub.close());

  const fresh = () => {
    models = tempDir("semsearch-models-");
    for (const key of Object.keys(hub.faults)) delete hub.faults[key as keyof typeof hub.faults];
    hub.requests.length = 0;
  };

  it("models pull downloads the q8 weights, config and tokenizer, checked, and a second pull asks nothing", async () => {
    fresh();
    const pulled = await cliJson(tempProject(), ["models", "pull", "tiny/mean"], { env: env() });
    expect(pulled).toMatchObject({ id: "tiny/mean", dtype: "q8", revision: "0123456789abcdef0123456789abcdef01234567", path: cached() });
    expect(readdirSync(path.join(cached(), "onnx"))).toEqual(["model_quantized.onnx"]);
    for (const file of ["config.json", "tokenizer.json", "tokenizer_config.json", "onnx/model_quantized.onnx"]) {
      expect(readFileSync(path.join(cached(), file))).toEqual(readFileSync(path.join(FIXTURES, "tiny-mean", file)));
    }
    const asked = hub.requests.length;
    await cliJson(tempProject(), ["models", "pull", "tiny/mean"], { env: env() });
    expect(hub.requests.length).toBe(asked);
    const listed = await cliJson(tempProject(), ["models", "list"], { env: env() });
    expect(listed.models.find((model: { id: string }) => model.id === "tiny/mean")).toMatchObject({ status: "downloaded", downloads: [{ dtypes: ["q8"] }] });
  });

  it("shows a progress bar on stderr in a terminal (and nothing without one: cliJson checks stderr is empty)", async () => {
    fresh();
    const saved = { ...process.env };
    Object.assign(process.env, env());
    try {
      const terminal = new Terminal(["models", "pull", "tiny/mean"]);
      expect(await terminal.exited).toBe(0);
      expect(terminal.screen).toMatch(/tiny\/mean \[█{24}\] (\d+\.\d MB)\/\1 · /);
      expect(terminal.screen).toMatch(/tiny\/mean \(q8, revision 0123456789ab\)/);
    } finally {
      for (const key of Object.keys(env())) delete process.env[key];
      Object.assign(process.env, saved);
    }
  });

  it("resumes an interrupted download with a range request", async () => {
    fresh();
    hub.faults.cut = { path: "model_quantized.onnx", bytes: 30_000 };
    const first = await runCli(["--json", "models", "pull", "tiny/mean"], { env: env() });
    expect(first.exitCode).toBe(6);
    expect(errorOf(first.stderr).code).toBe("MODEL_DOWNLOAD_FAILED");
    expect(errorOf(first.stderr).hint).toMatch(/again to resume/);
    expect(statSync(path.join(cached(), "onnx", "model_quantized.onnx.part")).size).toBe(30_000);
    delete hub.faults.cut;
    await cliJson(tempProject(), ["models", "pull", "tiny/mean"], { env: env() });
    expect(hub.requests).toContain("GET /tiny/mean/resolve/0123456789abcdef0123456789abcdef01234567/onnx/model_quantized.onnx bytes=30000-");
    expect(readFileSync(path.join(cached(), "onnx", "model_quantized.onnx"))).toEqual(readFileSync(path.join(FIXTURES, "tiny-mean", "onnx", "model_quantized.onnx")));
    expect(existsSync(path.join(cached(), "onnx", "model_quantized.onnx.part"))).toBe(false);
  });

  it("starts over when the server ignores the range", async () => {
    fresh();
    hub.faults.cut = { path: "model_quantized.onnx", bytes: 20_000 };
    expect((await runCli(["models", "pull", "tiny/mean"], { env: env() })).exitCode).toBe(6);
    delete hub.faults.cut;
    hub.faults.ignoreRange = true;
    await cliJson(tempProject(), ["models", "pull", "tiny/mean"], { env: env() });
    expect(readFileSync(path.join(cached(), "onnx", "model_quantized.onnx"))).toEqual(readFileSync(path.join(FIXTURES, "tiny-mean", "onnx", "model_quantized.onnx")));
  });

  it.each([
    ["a changed byte", { corrupt: "model_quantized.onnx" }, /SHA-256 differs/],
    ["a changed byte in a non-LFS file", { corrupt: "tokenizer.json" }, /git blob id differs/],
    ["more bytes than listed", { understate: "onnx/model_quantized.onnx" }, /more than the/],
  ])("refuses %s, keeps nothing of it, and records nothing", async (_, faults, message) => {
    fresh();
    Object.assign(hub.faults, faults);
    const result = await runCli(["--json", "models", "pull", "tiny/mean"], { env: env() });
    expect(result.exitCode).toBe(6);
    expect(errorOf(result.stderr)).toMatchObject({ code: "MODEL_DOWNLOAD_CORRUPT" });
    expect(errorOf(result.stderr).message).toMatch(message);
    expect(existsSync(path.join(cached(), ".semsearch.json"))).toBe(false);
    const parts = readdirSync(cached(), { recursive: true }).filter((file) => String(file).endsWith(".part"));
    expect(parts).toEqual([]);
  });

  it("gives up on a server that stops sending, after the stall timeout", async () => {
    fresh();
    hub.faults.stall = { path: "model_quantized.onnx", bytes: 1000 };
    const started = Date.now();
    const result = await runCli(["--json", "models", "pull", "tiny/mean"], { env: { ...env(), SEMSEARCH_DOWNLOAD_TIMEOUT: "1000" } });
    expect(result.exitCode).toBe(6);
    expect(errorOf(result.stderr)).toMatchObject({ code: "MODEL_DOWNLOAD_STALLED" });
    expect(Date.now() - started).toBeLessThan(60_000);
  });

  it.each([
    ["a body that stops halfway", { apiStall: true }, "MODEL_DOWNLOAD_STALLED"],
    ["null", { apiBody: "null" }, "MODEL_DOWNLOAD_FAILED"],
    ["siblings that are not objects", { apiBody: JSON.stringify({ sha: "0123456789abcdef0123456789abcdef01234567", siblings: [null, 5, "x"] }) }, "MODEL_UNSUPPORTED"],
    ["a file listed without a hash", { unhashed: "onnx/model_quantized.onnx" }, "MODEL_DOWNLOAD_CORRUPT"],
  ])("refuses a model API answer with %s, clearly", async (_, faults, code) => {
    fresh();
    Object.assign(hub.faults, faults);
    const result = await runCli(["--json", "models", "pull", "tiny/mean"], { env: { ...env(), SEMSEARCH_DOWNLOAD_TIMEOUT: "1000" } });
    expect([4, 6]).toContain(result.exitCode);
    expect(errorOf(result.stderr).code).toBe(code);
  });

  it("never records a short write as whole (a file size limit), and a later pull repairs a damaged cache", async () => {
    fresh();
    const limited = spawnSync("bash", ["-c", `ulimit -f 40; exec "${process.execPath}" "${path.join(ROOT, "bin", "semsearch")}" --json models pull tiny/mean`], { env: { ...process.env, ...env() }, encoding: "utf8" });
    expect(limited.status).not.toBe(0);
    expect(existsSync(path.join(cached(), ".semsearch.json"))).toBe(false);
    await cliJson(tempProject(), ["models", "pull", "tiny/mean"], { env: env() });
    const weights = path.join(cached(), "onnx", "model_quantized.onnx");
    expect(readFileSync(weights)).toEqual(readFileSync(path.join(FIXTURES, "tiny-mean", "onnx", "model_quantized.onnx")));
    rmSync(weights);
    rmSync(path.join(cached(), "tokenizer.json"));
    await cliJson(tempProject(), ["models", "pull", "tiny/mean"], { env: env() });
    expect(readFileSync(weights)).toEqual(readFileSync(path.join(FIXTURES, "tiny-mean", "onnx", "model_quantized.onnx")));
    expect(existsSync(path.join(cached(), "tokenizer.json"))).toBe(true);
  });

  it("refuses to remove a model while it is being downloaded", async () => {
    fresh();
    await cliJson(tempProject(), ["models", "pull", "tiny/mean"], { env: env() });
    // The hub holds the weights midway until the rm has been refused: the download is under way, however slowly this machine runs.
    let release = () => {};
    hub.faults.hold = { path: "onnx/model.onnx", bytes: 1024, release: new Promise<void>((resolve) => (release = resolve)) };
    const seen = hub.requests.length;
    const pulling = runCli(["--json", "models", "pull", "tiny/mean", "--dtype", "fp32"], { env: { ...env(), SEMSEARCH_DOWNLOAD_TIMEOUT: "150000" } });
    try {
      // The download holds its lock once it asks the hub for a file.
      await waitFor("the download to ask for the weights", () => hub.requests.slice(seen).some((request) => request.includes("/resolve/") && request.includes("onnx/model.onnx")));
      const removed = await runCli(["--json", "models", "rm", "tiny/mean"], { env: env() });
      expect(removed.exitCode, removed.stderr).toBe(5);
      expect(errorOf(removed.stderr).code).toBe("MODEL_BUSY");
    } finally {
      release();
      delete hub.faults.hold;
    }
    const pulled = await pulling;
    expect(pulled.exitCode, pulled.stderr).toBe(0);
    expect((await runCli(["--json", "models", "rm", "tiny/mean"], { env: env() })).exitCode).toBe(0);
  });

  it.each([
    ["a file", (dir: string) => writeFileSync(dir, "x")],
    ["a dangling link", (dir: string) => symlinkSync(path.join(dir, "..", "nowhere", "deeper"), dir)],
  ])("SEMSEARCH_MODELS naming %s is exit 6 with a hint about the models folder", async (_, make) => {
    fresh();
    const dir = path.join(tempDir(), "models");
    make(dir);
    const result = await runCli(["--json", "models", "pull", "tiny/mean"], { env: { ...env(), SEMSEARCH_MODELS: dir } });
    expect(result.exitCode).toBe(6);
    expect(errorOf(result.stderr).hint).toContain("SEMSEARCH_MODELS");
  });

  it("models pull use says the bundled model needs no download", async () => {
    const result = await runCli(["--json", "models", "pull", "use"]);
    expect(result.exitCode).toBe(4);
    expect(errorOf(result.stderr)).toMatchObject({ code: "NOTHING_TO_DOWNLOAD" });
  });

  it("finds the index's files in a newer download when only other files changed on the hub", async () => {
    fresh();
    const { project, id } = await setUp("tiny/mean", [], env());
    await cliJson(project, ["models", "rm", "tiny/mean", "--force"], { env: env() });
    const newer = await startHub({ "tiny/mean": path.join(FIXTURES, "tiny-mean") }, "fedcba9876543210fedcba9876543210fedcba98");
    try {
      const newerEnv = { ...env(), SEMSEARCH_HF_ENDPOINT: newer.url };
      const pulled = await cliJson(project, ["models", "pull", "tiny/mean"], { env: newerEnv });
      expect(pulled.revision).toBe("fedcba9876543210fedcba9876543210fedcba98");
      expect((await cliJson<SearchResponse>(project, ["search", id, "automobile"], { env: newerEnv })).results[0]?.id).toBe("car");
    } finally {
      await newer.close();
    }
  });

  it("a model the hub does not have is exit 3 MODEL_NOT_FOUND", async () => {
    fresh();
    const result = await runCli(["--json", "models", "pull", "tiny/nothing"], { env: env() });
    expect(result.exitCode).toBe(3);
    expect(errorOf(result.stderr)).toMatchObject({ code: "MODEL_NOT_FOUND" });
  });

  it("index create downloads a model first, and offline it creates nothing and names the ways out", async () => {
    fresh();
    const offline = tempProject();
    const result = await runCli(["--project", offline, "--json", "index", "create", "--model", "tiny/cls"], { env: { ...env(), SEMSEARCH_HF_ENDPOINT: "http://127.0.0.1:9" } });
    expect(result.exitCode).toBe(6);
    const error = errorOf(result.stderr);
    expect(error.code).toBe("MODEL_DOWNLOAD_FAILED");
    expect(error.hint).toContain("models pull tiny/cls");
    expect(error.hint).toContain("local folder");
    expect((await cliJson(offline, ["index", "list"])).indexes).toEqual([]);

    const { project, id } = await setUp("tiny/cls", [], env());
    const index = await cliJson(project, ["index", "get", id], { env: env() });
    expect(index.embedding).toMatchObject({ id: "tiny/cls", source: "hub", revision: "0123456789abcdef0123456789abcdef01234567", dtype: "fp32" });
    expect((await cliJson<SearchResponse>(project, ["search", id, "canine"], { env: env() })).results[0]?.id).toBe("dog");

    // rm is refused while the index uses it; forced, the search fails clearly; pulled again, it works.
    const refused = await runCli(["--project", project, "--json", "models", "rm", "tiny/cls"], { env: env() });
    expect(refused.exitCode).toBe(5);
    expect(errorOf(refused.stderr)).toMatchObject({ code: "MODEL_IN_USE" });
    await cliJson(project, ["models", "rm", "tiny/cls", "--force"], { env: env() });
    const missing = await runCli(["--project", project, "--json", "search", id, "canine"], { env: env() });
    expect(missing.exitCode).toBe(6);
    expect(errorOf(missing.stderr)).toMatchObject({ code: "MODEL_MISSING" });
    expect(errorOf(missing.stderr).hint).toContain("models pull tiny/cls");
    await cliJson(project, ["models", "pull", "tiny/cls"], { env: env() });
    expect((await cliJson<SearchResponse>(project, ["search", id, "canine"], { env: env() })).results[0]?.id).toBe("dog");
  });

  it("a copied models folder works offline (the air-gapped path)", async () => {
    fresh();
    await cliJson(tempProject(), ["models", "pull", "tiny/mean"], { env: env() });
    const copy = tempDir("semsearch-models-copy-");
    cpSync(models, copy, { recursive: true });
    rmSync(models, { recursive: true, force: true });
    const offlineEnv = { SEMSEARCH_MODELS: copy, SEMSEARCH_HF_ENDPOINT: "http://127.0.0.1:9" };
    const { project, id } = await setUp("tiny/mean", [], offlineEnv);
    expect((await cliJson<SearchResponse>(project, ["search", id, "automobile"], { env: offlineEnv })).results[0]?.id).toBe("car");
  });
});
