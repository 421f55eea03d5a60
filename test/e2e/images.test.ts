/**
 * Image indexes end to end through the real CLI, offline: the tiny CLIP fixture (its vision tower sees
 * an image's mean colour, its text tower maps colour words the same way, so rankings can be asserted),
 * the generated images of fixtures/images in every format, local files by relative and absolute path,
 * and a local HTTP server for the fetching rules.
 */
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { crc32 } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliJson, ROOT, runCli, tempProject } from "../helpers/cli.js";
import { KEY, Terminal } from "../helpers/pty.js";
import { call, serve } from "../helpers/serve.js";
import { tempDir } from "../helpers/temp.js";
import { startHub } from "../../src/torture/hub-server.js";

const CLIP = path.join(ROOT, "fixtures", "models", "tiny-clip");
const IMAGES = path.join(ROOT, "fixtures", "images");

interface Hit {
  id: string;
  object: Record<string, unknown>;
  highlights?: ({ reference_type: "image"; media_identifier: string } | { highlight_type: "text"; highlight: { text: string }; references: { source: string }[] })[];
}
interface Response {
  results: Hit[];
  pagination: { pages: number; next?: { offset: number; limit: number }; statistics: { total: number; total_calculation: string } };
}

function jsonl(items: object[]): string {
  return items.map((item) => JSON.stringify(item)).join("\n") + "\n";
}

/** A PNG whose header says `width` × `height` (a decompression bomb's header; no pixel data follows). */
function pngHeader(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr), chunk("IDAT", Buffer.alloc(16)), chunk("IEND", Buffer.alloc(0))]);
}

const ids = (response: Response) => response.results.map((hit) => hit.id);

describe("an image index over local files", () => {
  let project = "";
  let data = "";
  let id = "";
  let waited: Awaited<ReturnType<typeof runCli>>;

  const objects = [
    { id: "red", caption: "a ripe tomato", kind: "food", photo: "pics/red.png" },
    { id: "green", caption: "a lawn in spring", kind: "nature", photo: "pics/green.jpg" },
    { id: "blue", caption: "the open sea", kind: "nature", photo: "./pics/blue.webp" },
    { id: "yellow", caption: "a banana", kind: "food", photo: "pics/yellow.gif" },
    { id: "white", caption: "snow", kind: "nature", photo: "" },
    { id: "flag", caption: "a flag", kind: "things", photos: ["pics/black.png", "pics/red-blue.png"] },
    { id: "text-only", caption: "a tomato soup recipe with no picture", kind: "food" },
    { id: "missing", caption: "lost", kind: "things", photo: "pics/nowhere.png" },
    { id: "not-image", caption: "notes", kind: "things", photo: "pics/notes.jpg" },
    { id: "empty", caption: "empty", kind: "things", photo: "pics/empty.png" },
    { id: "bomb", caption: "huge", kind: "things", photo: "pics/bomb.png" },
    { id: "crowded", caption: "too many", kind: "things", photos: Array.from({ length: 257 }, () => "pics/red.png") },
  ];

  beforeAll(async () => {
    project = tempProject();
    data = tempDir();
    cpSync(IMAGES, path.join(data, "pics"), { recursive: true });
    writeFileSync(path.join(data, "pics", "notes.jpg"), "these are my notes, not a picture\n");
    writeFileSync(path.join(data, "pics", "empty.png"), "");
    writeFileSync(path.join(data, "pics", "bomb.png"), pngHeader(50_000, 50_000));
    objects[4]!.photo = path.join(data, "pics", "white.png"); // an absolute path
    writeFileSync(path.join(data, "objects.jsonl"), jsonl(objects));
    // Added from another working directory: relative paths are resolved against the file's directory.
    await cliJson(project, ["objects", "add", path.join(data, "objects.jsonl")], { cwd: ROOT });
    const created = await runCli(["--project", project, "--json", "index", "create", "--type", "image", "--model", CLIP, "--filterable", "kind", "--highlights", "--wait"]);
    id = JSON.parse(created.stdout.split("\n")[0] as string).id;
    waited = created;
  });

  it("indexes every object it can and puts the others in ERROR with a reason a person understands", async () => {
    expect(waited.exitCode, waited.stderr).toBe(7);
    const { status } = await cliJson(project, ["index", "status", id]);
    expect(status).toMatchObject({ READY: 7, ERROR: 5, UPLOADED: 0, PROCESSING: 0 });
    const reason = async (object: string) => (await cliJson(project, ["objects", "get", object])).status.indexes[0].error as string;
    expect(await reason("missing")).toBe('image "pics/nowhere.png": file not found');
    // a local file's content is never quoted (it is not the reader's to show); a download's is
    expect(await reason("not-image")).toBe('image "pics/notes.jpg": not an image (unknown format)');
    expect(await reason("empty")).toBe('image "pics/empty.png": empty file');
    expect(await reason("bomb")).toMatch(/^image "pics\/bomb\.png": too large: 50000 × 50000 pixels/);
    expect(await reason("crowded")).toBe("257 images; an object holds at most 256 in an image index");
  });

  it("finds the image of the colour a query names, in every format, by images alone", async () => {
    for (const [query, first] of [["red", "red"], ["green", "green"], ["blue", "blue"], ["yellow", "yellow"], ["white", "white"]] as const) {
      const response = await cliJson<Response>(project, ["search", id, `a ${query} picture`, "--mode", "vector"]);
      expect(ids(response)[0], query).toBe(first);
    }
  });

  it("ranks an object by its best image", async () => {
    // "flag" has a black image and a red-blue one: for "black" it is first, by its black image
    const response = await cliJson<Response>(project, ["search", id, "black", "--mode", "vector", "--result-fields", "highlights"]);
    expect(ids(response)[0]).toBe("flag");
    expect(response.results[0]?.highlights?.[0]).toEqual({ reference_type: "image", media_identifier: "pics/black.png" });
  });

  it("gives each result its images as highlights, best first, exactly as stored, then its text highlights", async () => {
    const response = await cliJson<Response>(project, ["search", id, "tomato", "--result-fields", "highlights", "--limit", "20"]);
    const byId = new Map(response.results.map((hit) => [hit.id, hit]));
    expect(byId.get("red")?.highlights?.[0]).toEqual({ reference_type: "image", media_identifier: "pics/red.png" });
    expect(byId.get("blue")?.highlights?.[0]).toEqual({ reference_type: "image", media_identifier: "./pics/blue.webp" });
    expect(byId.get("white")?.highlights?.[0]).toEqual({ reference_type: "image", media_identifier: objects[4]!.photo });
    expect(byId.get("flag")?.highlights?.filter((h) => "reference_type" in h)).toHaveLength(2);
    // text highlights of the caption come after the images; an object without images has only those
    expect(byId.get("text-only")?.highlights).toEqual([expect.objectContaining({ highlight_type: "text", highlight: { text: objects[6]!.caption } })]);
    // hybrid: the lexical part finds the captions that say "tomato"
    expect(ids(response).slice(0, 2).sort()).toEqual(["red", "text-only"]);
  });

  it("keeps image references out of the lexical part", async () => {
    const response = await cliJson<Response>(project, ["search", id, "pics png", "--mode", "lexical"]);
    expect(response.results).toEqual([]);
  });

  it("applies filters, and pages walk every result once", async () => {
    const food = await cliJson<Response>(project, ["search", id, "red", "--mode", "vector", "--filter", "kind:food"]);
    expect(ids(food).sort()).toEqual(["red", "yellow"]);
    const seen: string[] = [];
    let offset: number | undefined = 0;
    let total = 0;
    while (offset !== undefined) {
      const page: Response = await cliJson<Response>(project, ["search", id, "a colour", "--mode", "vector", "--limit", "2", "--offset", String(offset)]);
      seen.push(...ids(page));
      total = page.pagination.statistics.total;
      offset = page.pagination.next?.offset;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.sort()).toEqual(["blue", "flag", "green", "red", "white", "yellow"]);
    expect(total).toBe(6);
  });

  it("shows the best image in tables, never escape codes in a pipe", async () => {
    const table = await runCli(["--project", project, "search", id, "red", "--mode", "vector", "--limit", "2"]);
    expect(table.exitCode, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^rank\tid\tscore\timage\n/); // (in a pipe: tab-separated values)
    expect(table.stdout).toMatch(/pics\/red\.png/);
    expect(table.stdout).not.toMatch(/\u001b/);
  });

  it("clears an object's ERROR once it is fixed", async () => {
    const fixed = { ...objects[7], photo: "pics/green.png" };
    writeFileSync(path.join(data, "fix.jsonl"), jsonl([fixed]));
    await cliJson(project, ["objects", "add", path.join(data, "fix.jsonl")]);
    await runCli(["--project", project, "index", "status", id, "--wait"]);
    const object = await cliJson(project, ["objects", "get", "missing"]);
    expect(object.status.indexes[0]).toMatchObject({ status: "READY", searchable: true });
    expect(object.status.indexes[0].error).toBeUndefined();
  });

  it("resolves relative paths of standard input against the working directory", async () => {
    await cliJson(project, ["objects", "add", "-"], { cwd: data, input: jsonl([{ id: "stdin", caption: "piped", photo: "pics/yellow.png" }]) });
    await runCli(["--project", project, "index", "status", id, "--wait"]);
    expect((await cliJson(project, ["objects", "get", "stdin"])).status.indexes[0].status).toBe("READY");
  });

  it("shows a thumbnail of the opened result's image in a terminal that can show images", async () => {
    const terminal = new Terminal(["--project", project, "search", id, "red", "--mode", "vector"], { cols: 120, rows: 40 }, { SEMSEARCH_INLINE_IMAGES: "kitty" });
    try {
      await terminal.waitFor(/What next\?/);
      await terminal.type("o");
      await terminal.waitFor(/Which result\?/);
      await terminal.type(KEY.enter);
      await terminal.waitFor(/What next\?/);
      expect(terminal.rawScreen).toMatch(/\u001b_Ga=T,f=100,[^;]*;[A-Za-z0-9+/=]+\u001b\\/);
      await terminal.type("q");
      expect(await terminal.exited).toBe(0);
    } finally {
      terminal.kill();
    }
  });
});

describe("image index creation", () => {
  it("refuses a text model for an image index and a CLIP model for a text index, creating nothing", async () => {
    const project = tempProject();
    await cliJson(project, ["objects", "add", "-"], { input: jsonl([{ id: "a", photo: "a.png" }]) });
    const text = await runCli(["--project", project, "--json", "index", "create", "--type", "image", "--model", "use"]);
    expect(text.exitCode).toBe(4);
    expect(JSON.parse(text.stderr).errors[0]).toMatchObject({ code: "MODEL_UNSUPPORTED" });
    const clip = await runCli(["--project", project, "--json", "index", "create", "--model", CLIP]);
    expect(clip.exitCode).toBe(4);
    expect(JSON.parse(clip.stderr).errors[0].message).toMatch(/image-text \(CLIP\) model/);
    expect((await cliJson(project, ["index", "list"])).indexes).toEqual([]);
  });

  it("downloads the default CLIP model on first use; offline it says so and creates nothing", async () => {
    const project = tempProject();
    await cliJson(project, ["objects", "add", "-"], { input: jsonl([{ id: "a", photo: "a.png" }]) });
    const offline = await runCli(["--project", project, "--json", "index", "create", "--type", "image"], { env: { SEMSEARCH_MODELS: path.join(tempDir(), "models") } });
    expect(offline.exitCode, offline.stderr).toBe(6);
    expect(offline.stderr).toMatch(/Xenova\/clip-vit-base-patch32/);
    expect((await cliJson(project, ["index", "list"])).indexes).toEqual([]);
  });

  it("downloads a CLIP model from the hub: both towers and the image preprocessing, q8 by default", async () => {
    const hub = await startHub({ "tiny/clip": CLIP });
    try {
      const project = tempProject();
      const env = { SEMSEARCH_HF_ENDPOINT: hub.url, SEMSEARCH_MODELS: path.join(tempDir(), "models") };
      await cliJson(project, ["objects", "add", "-"], { input: jsonl([{ id: "r", photo: path.join(IMAGES, "red.png") }, { id: "b", photo: path.join(IMAGES, "blue.png") }]), env });
      const { id } = await cliJson<{ id: string }>(project, ["index", "create", "--type", "image", "--model", "tiny/clip", "--wait"], { env });
      const downloaded = hub.requests.filter((request) => request.startsWith("GET /tiny/clip/resolve/")).map((request) => request.split(" ")[1]?.split("/").slice(5).join("/"));
      expect(downloaded.sort()).toEqual(["config.json", "onnx/text_model_quantized.onnx", "onnx/vision_model_quantized.onnx", "preprocessor_config.json", "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json"]);
      const index = await cliJson(project, ["index", "get", id], { env });
      expect(index.embedding).toMatchObject({ kind: "clip", source: "hub", dtype: "q8", weights: { file: "onnx/text_model_quantized.onnx" }, vision_weights: { file: "onnx/vision_model_quantized.onnx" }, dimension: 16 });
      expect(ids(await cliJson<Response>(project, ["search", id, "blue", "--mode", "vector"], { env }))[0]).toBe("b");
    } finally {
      await hub.close();
    }
  });

  it("refuses a CLIP folder whose preprocessing does not fit its vision tower, with one JSON error document", async () => {
    const project = tempProject();
    const folder = path.join(tempDir(), "crop-64");
    cpSync(CLIP, folder, { recursive: true });
    const config = JSON.parse(readFileSync(path.join(folder, "preprocessor_config.json"), "utf8"));
    writeFileSync(path.join(folder, "preprocessor_config.json"), JSON.stringify({ ...config, crop_size: { height: 64, width: 64 }, size: { shortest_edge: 64 } }));
    const result = await runCli(["--project", project, "--json", "index", "create", "--type", "image", "--model", folder]);
    expect(result.exitCode).toBe(4);
    expect(JSON.parse(result.stderr).errors[0].message).toMatch(/preprocessor_config\.json makes 64 × 64 images, but its vision tower takes 32 × 32/);
  });

  it("refuses image fields in a text index", async () => {
    const project = tempProject();
    const result = await runCli(["--project", project, "--json", "index", "create", "--image-fields", "photo"]);
    expect(result.exitCode).toBe(4);
    expect(JSON.parse(result.stderr).errors[0].message).toMatch(/configuration\.fields\.images\.0: image fields are for image indexes/);
  });
});

/** A local image server: each path's behaviour is set by the test; counts what it sent. */
class ImageServer {
  readonly server: Server;
  readonly bodies = new Map<string, number>();
  readonly conditional = new Map<string, number>();
  hits = new Map<string, number>();
  changing = { bytes: readFileSync(path.join(IMAGES, "red.png")), etag: '"v1"' };
  private url = "";

  constructor() {
    this.server = createServer((request, response) => this.handle(request, response));
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  private send(response: ServerResponse, path: string, bytes: Buffer, type = "image/png", headers: Record<string, string> = {}): void {
    this.bodies.set(path, (this.bodies.get(path) ?? 0) + 1);
    response.writeHead(200, { "content-type": type, "content-length": String(bytes.length), ...headers });
    response.end(bytes);
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const url = request.url ?? "/";
    const count = (this.hits.get(url) ?? 0) + 1;
    this.hits.set(url, count);
    const png = (colour: string) => readFileSync(path.join(IMAGES, `${colour}.png`));
    switch (url) {
      case "/ok.png":
        return this.send(response, url, png("green"));
      case "/private.png":
        return this.send(response, url, png("white"));
      case "/flaky.png":
        if (count === 1) {
          response.writeHead(500).end("try again");
          return;
        }
        return this.send(response, url, png("blue"));
      case "/slow.png":
        response.writeHead(200, { "content-type": "image/png" });
        response.write(png("red").subarray(0, 10));
        return; // never finishes
      case "/big.png":
        return this.send(response, url, Buffer.concat([png("red"), Buffer.alloc(200_000)]));
      case "/page.png":
        return this.send(response, url, Buffer.from("<!DOCTYPE html><html></html>"), "text/html");
      case "/loop.png":
        response.writeHead(302, { location: "/loop2.png" }).end();
        return;
      case "/loop2.png":
        response.writeHead(302, { location: "/loop.png" }).end();
        return;
      case "/changing.png":
        if (request.headers["if-none-match"] !== undefined) this.conditional.set(url, (this.conditional.get(url) ?? 0) + 1);
        if (request.headers["if-none-match"] === this.changing.etag) {
          response.writeHead(304, { etag: this.changing.etag }).end();
          return;
        }
        return this.send(response, url, this.changing.bytes, "image/png", { etag: this.changing.etag });
      default:
        response.writeHead(404).end("not found");
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe("an image index over HTTP", () => {
  const images = new ImageServer();
  let base = "";
  let project = "";
  let id = "";
  const env = { SEMSEARCH_IMAGE_TIMEOUT: "1", SEMSEARCH_IMAGE_MAX_BYTES: "100000", SEMSEARCH_IMAGE_RETRY_DELAY_MS: "50" };
  const reason = async (object: string) => (await cliJson(project, ["objects", "get", object], { env })).status.indexes[0];

  beforeAll(async () => {
    base = await images.start();
    project = tempProject();
    const objects = [
      { id: "ok", photo: `${base}/ok.png` },
      { id: "gone", photo: `${base}/gone.png` },
      { id: "flaky", photo: `${base}/flaky.png` },
      { id: "slow", photo: `${base}/slow.png` },
      { id: "big", photo: `${base}/big.png` },
      { id: "page", photo: `${base}/page.png` },
      { id: "loop", photo: `${base}/loop.png` },
      { id: "changing", photo: `${base}/changing.png` },
    ];
    await cliJson(project, ["objects", "add", "-"], { input: jsonl(objects), env });
    const created = await runCli(["--project", project, "--json", "index", "create", "--type", "image", "--model", CLIP, "--wait"], { env });
    expect(created.exitCode, created.stderr).toBe(7);
    id = JSON.parse(created.stdout.split("\n")[0] as string).id;
  });

  afterAll(() => images.close());

  it("fetches images in the background and gives each failure its documented state", async () => {
    expect(await reason("ok")).toMatchObject({ status: "READY" });
    expect(await reason("gone")).toMatchObject({ status: "ERROR", error: `image "${base}/gone.png": HTTP 404` });
    expect(await reason("flaky")).toMatchObject({ status: "READY" }); // 500, then 200 on the retry
    expect(images.hits.get("/flaky.png")).toBe(2);
    expect((await reason("slow")).error).toMatch(/^image ".*\/slow\.png": timed out after 1 s/);
    expect((await reason("big")).error).toMatch(/^image ".*\/big\.png": larger than /);
    expect((await reason("page")).error).toMatch(/^image ".*\/page\.png": not an image \(Content-Type text\/html\)/);
    expect((await reason("loop")).error).toMatch(/^image ".*\/loop\.png": redirect loop/);
  });

  it("keeps fetched images in the project's cache: another index revalidates instead of downloading", async () => {
    const before = images.bodies.get("/changing.png");
    const second = await runCli(["--project", project, "--json", "index", "create", "--type", "image", "--model", CLIP, "--neural-only", "--wait"], { env });
    expect(second.exitCode).toBe(7);
    expect(images.bodies.get("/changing.png")).toBe(before);
    expect(images.conditional.get("/changing.png")).toBeGreaterThanOrEqual(1);
  });

  it("never shows a URL's credentials in tables", async () => {
    const secret = `${base.replace("://", "://user:s3cret@")}/private.png`;
    await cliJson(project, ["objects", "add", "-"], { input: jsonl([{ id: "private", photo: secret }]), env });
    await runCli(["--project", project, "index", "status", id, "--wait"], { env });
    const table = await runCli(["--project", project, "search", id, "white", "--mode", "vector", "--limit", "3"], { env });
    expect(table.stdout).toMatch(/private\.png/);
    expect(table.stdout).not.toMatch(/s3cret/);
    // the JSON shape keeps the identifier exactly as stored
    const json = await cliJson<Response>(project, ["search", id, "white", "--mode", "vector", "--limit", "3", "--result-fields", "highlights"], { env });
    expect(JSON.stringify(json)).toContain(secret);
  });

  it("sees a changed image (new ETag) when its object is indexed again", async () => {
    const top = async (query: string) => ids(await cliJson<Response>(project, ["search", id, query, "--mode", "vector"], { env }))[0];
    expect(await top("red")).toBe("changing");
    images.changing = { bytes: readFileSync(path.join(IMAGES, "yellow.png")), etag: '"v2"' };
    await cliJson(project, ["objects", "add", "-"], { input: jsonl([{ id: "changing", photo: `${base}/changing.png` }]), env });
    await runCli(["--project", project, "index", "status", id, "--wait"], { env });
    expect(await top("yellow")).toBe("changing");
  });
});

describe("image files of objects added over HTTP, behind symbolic links (--image-root)", () => {
  it("says outside for a link out of the root whether or not its target exists, and file not found only inside", async () => {
    const base = tempDir();
    const root = path.join(base, "root");
    const outside = path.join(base, "outside");
    mkdirSync(path.join(root, "sub"), { recursive: true });
    mkdirSync(outside);
    cpSync(path.join(IMAGES, "blue.png"), path.join(root, "sub", "blue.png"));
    cpSync(path.join(IMAGES, "red.png"), path.join(outside, "red.png"));
    symlinkSync(path.join(outside, "red.png"), path.join(root, "out.png"));
    symlinkSync(path.join(outside, "missing.png"), path.join(root, "out-missing.png"));
    symlinkSync("out-missing.png", path.join(root, "chain.png"));
    symlinkSync(path.join(root, "sub", "missing.png"), path.join(root, "dangling.png"));
    symlinkSync("sub", path.join(root, "linked"));
    const project = tempProject();
    const index = (await cliJson(project, ["index", "create", "--type", "image", "--model", CLIP, "--image-fields", "photo"])).id;
    const server = await serve(project, ["--no-auth", "--no-access-log", "--image-root", root]);
    try {
      const objects = [
        { id: "inside", photo: "linked/blue.png" },
        { id: "out", photo: "out.png" },
        { id: "out-missing", photo: "out-missing.png" },
        { id: "chain", photo: "chain.png" },
        { id: "dangling", photo: "dangling.png" },
      ];
      const answer = await call(`${server.url}/v1/objects`, null, { method: "POST", body: JSON.stringify(objects), headers: { "content-type": "application/json" } });
      expect(answer.status, answer.text).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    expect((await runCli(["--project", project, "--json", "index", "status", index, "--wait"])).exitCode).toBe(7); // objects failed
    const state = async (id: string) => (await cliJson(project, ["objects", "get", id])).status.indexes[0];
    expect(await state("inside")).toMatchObject({ status: "READY" });
    const out = await state("out");
    expect(out).toMatchObject({ status: "ERROR", error: expect.stringContaining("outside the folder the server reads images from (--image-root)") });
    // The same words, but for the reference quoted in them: nothing tells whether the target exists.
    for (const id of ["out-missing", "chain"]) expect((await state(id)).error.replace(`${id}.png`, "out.png")).toBe(out.error);
    expect(await state("dangling")).toMatchObject({ status: "ERROR", error: expect.stringContaining("file not found") });
  });
});

describe("a project directory of its own", () => {
  it("stores nothing of the images but their references and the HTTP cache", async () => {
    const project = tempProject();
    const dir = tempDir();
    mkdirSync(path.join(dir, "a"));
    cpSync(path.join(IMAGES, "red.jpg"), path.join(dir, "a", "x.jpg"));
    writeFileSync(path.join(dir, "objects.json"), JSON.stringify([{ id: "x", photo: "a/x.jpg" }]));
    await cliJson(project, ["objects", "add", path.join(dir, "objects.json")]);
    const created = await cliJson<{ id: string }>(project, ["index", "create", "--type", "image", "--model", CLIP, "--wait"]);
    const object = await cliJson(project, ["objects", "get", "x"]);
    expect(object.object).toEqual({ id: "x", photo: "a/x.jpg" });
    expect(ids(await cliJson<Response>(project, ["search", created.id, "red", "--mode", "vector"]))).toEqual(["x"]);
  });
});

describe("a worker killed while building an image index", () => {
  it("is resumed by the next command: every object indexed once, each image once", async () => {
    const project = tempProject();
    const dir = tempDir();
    cpSync(IMAGES, path.join(dir, "pics"), { recursive: true });
    const objects = [
      { id: "one", photo: "pics/red.png" },
      { id: "two", photos: ["pics/blue.png", "pics/green.png"] },
      { id: "three", photo: "pics/yellow.jpg" },
    ];
    writeFileSync(path.join(dir, "objects.jsonl"), jsonl(objects));
    await cliJson(project, ["objects", "add", path.join(dir, "objects.jsonl")]);
    // the worker dies after writing the object rows, before the image rows and its progress
    const created = await cliJson<{ id: string }>(project, ["index", "create", "--type", "image", "--model", CLIP], { env: { SEMSEARCH_FAILPOINT: "worker:rows" } });
    const waited = await runCli(["--project", project, "--json", "index", "status", created.id, "--wait"]);
    expect(waited.exitCode, waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout).status).toMatchObject({ READY: 3, ERROR: 0 });
    const response = await cliJson<Response>(project, ["search", created.id, "blue", "--mode", "vector", "--result-fields", "highlights"]);
    expect(ids(response).sort()).toEqual(["one", "three", "two"]);
    expect(response.results.find((hit) => hit.id === "two")?.highlights).toEqual([
      { reference_type: "image", media_identifier: "pics/blue.png" },
      { reference_type: "image", media_identifier: "pics/green.png" },
    ]);
  });
});

describe("HTTP requests at once", () => {
  it("are at most 8 in all, however many embedding threads fetch", async () => {
    let inFlight = 0;
    let most = 0;
    const red = readFileSync(path.join(IMAGES, "red.png"));
    // The first answers are held until two requests are in flight together (so concurrency is seen however
    // slowly the machine runs); later ones take 150 ms, as a slow server's, giving the fetchers every chance to exceed 8.
    let held: (() => void)[] | null = [];
    const server = createServer((_request, response) => {
      most = Math.max(most, ++inFlight);
      const reply = () => {
        inFlight--;
        response.writeHead(200, { "content-type": "image/png", "content-length": String(red.length) }).end(red);
      };
      if (held === null) return void setTimeout(reply, 150);
      held.push(reply);
      if (inFlight < 2) return;
      for (const answer of held.splice(0)) answer();
      held = null;
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const project = tempProject();
      const env = { SEMSEARCH_THREADS: "4" };
      await cliJson(project, ["objects", "add", "-"], { input: jsonl(Array.from({ length: 48 }, (_, i) => ({ id: `o${i}`, photo: `${url}/${i}.png` }))), env });
      const created = await runCli(["--project", project, "--json", "index", "create", "--type", "image", "--model", CLIP, "--wait"], { env });
      expect(created.exitCode, created.stderr).toBe(0);
      expect(most).toBeGreaterThan(1);
      expect(most).toBeLessThanOrEqual(8);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
