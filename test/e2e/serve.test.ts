/**
 * `semsearch serve`: real HTTP over loopback against the built binary, every route and status,
 * answers compared with the CLI's `--json` for the same project, and every answer checked against
 * the server's own OpenAPI document.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliJson, ROOT, runCli, SAMPLE, tempProject } from "../helpers/cli.js";
import { call, drip, rawRequest, serve, waitUntil, type RawRequest, type Served } from "../helpers/serve.js";

const project = tempProject();
let server: Served;
let indexId = "";
let writer = "";
let reader = "";
let revoked = "";
/** Every answer seen, checked against the OpenAPI document at the end. */
const seen: { method: string; path: string; status: number; json: unknown }[] = [];

async function api(method: string, path: string, key: string | null = writer, init: RequestInit = {}) {
  const answer = await call(`${server.url}${path}`, key, { ...init, method });
  seen.push({ method, path: path.split("?")[0] as string, status: answer.status, json: answer.json });
  return answer;
}

const cli = (args: string[]) => cliJson(project, args);

beforeAll(async () => {
  await cli(["objects", "add", SAMPLE]);
  indexId = (await cli(["index", "create", "--name", "articles", "--searchable", "title,body", "--highlights", "--filterable", "topic,year", "--field-type", "year=float", "--wait"])).id;
  writer = (await cli(["keys", "create", "--name", "writer"])).key;
  reader = (await cli(["keys", "create", "--name", "reader", "--read-only"])).key;
  const old = await cli(["keys", "create", "--name", "old"]);
  await cli(["keys", "revoke", old.id]);
  revoked = old.key;
  server = await serve(project, ["--max-body-mb", "1"]);
});

afterAll(async () => {
  await server?.stop();
});

describe("the spec's routes", () => {
  it("searches with the exact bytes the CLI's --json prints (highlights, filters, fields)", async () => {
    const cases = [
      { query: "query=how%20do%20plants%20make%20energy", args: ["how do plants make energy"] },
      { query: "query=energy&limit=3&offset=2&object_fields=title,year", args: ["energy", "--limit", "3", "--offset", "2", "--object-fields", "title,year"] },
      { query: "query=cells&result_fields=highlights&object_fields=*", args: ["cells", "--result-fields", "highlights", "--object-fields", "*"] },
      { query: "query=cells&results_fields=highlights", args: ["cells", "--result-fields", "highlights"] },
      { query: "query=%22how%20plants%22", args: ['"how plants"'] },
      { query: `query=energy&filter_query=${encodeURIComponent("topic:biology AND year:>=2020")}`, args: ["energy", "--filter", "topic:biology AND year:>=2020"] },
    ];
    for (const { query, args } of cases) {
      const answer = await api("GET", `/v1/indexes/${indexId}/search?${query}`);
      expect(answer.status, answer.text).toBe(200);
      expect(answer.headers.get("content-type")).toBe("application/json; charset=utf-8");
      // The engine's own time for the search, for clients and for bench:serve's overhead figure.
      expect(answer.headers.get("server-timing")).toMatch(/^search;dur=\d+\.\d$/);
      const printed = await runCli(["--project", project, "--json", "search", indexId, ...args, "--in-process"]);
      expect(answer.text).toBe(printed.stdout);
    }
    const highlighted = await api("GET", `/v1/indexes/${indexId}/search?query=cells&result_fields=highlights`);
    expect(highlighted.json.results[0].highlights[0].highlight_type).toBe("text");
    // the extensions score and explain (their shape is checked against the OpenAPI document below)
    const scored = await api("GET", `/v1/indexes/${indexId}/search?query=cells&result_fields=score,explain,highlights&semantic_ratio=0.5`);
    expect(scored.json.results[0]).toMatchObject({ score: expect.any(Number), explain: { ranking: expect.any(String) } });
  });

  it("walks every page through the next links, as `search --all` does", async () => {
    const ids: string[] = [];
    let path = `/v1/indexes/articles/search?query=energy&limit=7`;
    let pages = 0;
    for (;;) {
      const answer = await api("GET", path);
      expect(answer.status).toBe(200);
      ids.push(...answer.json.results.map((r: { id: string }) => r.id));
      if (++pages === 1) expect(answer.json.pagination.page).toBe(1);
      const next = answer.json.pagination.next;
      if (!next) break;
      path = `/v1/indexes/articles/search?query=energy&limit=${next.limit}&offset=${next.offset}`;
    }
    const all = await cli(["search", indexId, "energy", "--all"]);
    expect(ids).toEqual(all.results.map((r: { id: string }) => r.id));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("creates an index with 202 and its id, built in the background", async () => {
    const body = JSON.stringify({ configuration: { index_type: { name: "text" }, fields: { searchable: { allow: ["title"] } } } });
    const answer = await api("POST", "/v1/indexes", writer, { body, headers: { "content-type": "application/json" } });
    expect(answer.status, answer.text).toBe(202);
    expect(Object.keys(answer.json)).toEqual(["id"]);
    expect(answer.json.id).toMatch(/^idx_[A-Za-z0-9_-]+$/);
    const listed = await cli(["index", "list"]);
    expect(listed.indexes.map((index: { id: string }) => index.id)).toContain(answer.json.id);
    const deleted = await api("DELETE", `/v1/indexes/${answer.json.id}`);
    expect(deleted.json).toEqual({ deleted: answer.json.id });
  });

  it("answers 404 for an invalid index type and 422 for a validation error, naming the field", async () => {
    const post = (body: string) => api("POST", "/v1/indexes", writer, { body, headers: { "content-type": "application/json" } });
    const audio = await post(JSON.stringify({ configuration: { index_type: { name: "audio" } } }));
    expect(audio.status).toBe(404);
    expect(audio.json.errors[0].code).toBe("INVALID_INDEX_TYPE");
    const invalid = await post(JSON.stringify({ configuration: { index_type: { name: "text" }, fields: { types: { price: "money" } } } }));
    expect(invalid.status).toBe(422);
    expect(invalid.json.errors[0].code).toBe("INVALID_CONFIG");
    expect(invalid.json.errors[0].message).toContain("price");
  });
});

describe("the operations the spec leaves unshown", () => {
  it("lists, gets and counts indexes and reads objects and the worker as the CLI prints them", async () => {
    const pairs: [string, string[]][] = [
      ["/v1/indexes", ["index", "list"]],
      [`/v1/indexes/${indexId}`, ["index", "get", indexId]],
      ["/v1/indexes/articles/status", ["index", "status", "articles"]],
      ["/v1/objects/photosynthesis", ["objects", "get", "photosynthesis"]],
      ["/v1/objects?limit=5&offset=3", ["objects", "list", "--limit", "5", "--offset", "3"]],
    ];
    for (const [path, args] of pairs) {
      const answer = await api("GET", path, reader);
      expect(answer.status, path).toBe(200);
      const printed = await runCli(["--project", project, "--json", ...args]);
      expect(answer.text, path).toBe(printed.stdout);
    }
    const worker = await api("GET", "/v1/worker", reader);
    expect(worker.status).toBe(200);
    expect(typeof worker.json.running).toBe("boolean");
  });

  it("serves thumbnails only of the images an object names (the search page's route)", async () => {
    const refused = await api("GET", `/v1/objects/photosynthesis/thumbnail?image=${encodeURIComponent("/etc/passwd")}`, reader);
    expect(refused.status).toBe(404);
    expect(refused.json.errors[0]).toMatchObject({ code: "IMAGE_NOT_FOUND", message: 'Object "photosynthesis" has no image "/etc/passwd"' });
    expect((await api("GET", "/v1/objects/photosynthesis/thumbnail?image=x&size=5000", reader)).status).toBe(422);
    expect((await api("GET", "/v1/objects/photosynthesis/thumbnail", reader)).json.errors[0].code).toBe("INVALID_PARAMETER");
    expect((await api("GET", "/v1/objects/photosynthesis/thumbnail?image=x", null)).status).toBe(404);
  });

  it("puts, batch-adds (JSON array and JSON Lines) and deletes objects", async () => {
    const put = await api("PUT", "/v1/objects/serve%2Fone", writer, { body: JSON.stringify({ title: "A kettle whistles on the stove" }), headers: { "content-type": "application/json" } });
    expect(put.status, put.text).toBe(200);
    expect(put.json).toEqual({ count: 1, ids: ["serve/one"] });
    const got = await api("GET", "/v1/objects/serve%2Fone");
    expect(got.json.object).toEqual({ title: "A kettle whistles on the stove" });

    const array = await api("POST", "/v1/objects", writer, { body: JSON.stringify([{ id: "s1", title: "one" }, { id: "s2", title: "two" }]), headers: { "content-type": "application/json" } });
    expect(array.json).toEqual({ count: 2, ids: ["s1", "s2"] });
    const lines = await api("POST", "/v1/objects?id_field=sku", writer, { body: '{"sku":"s3","title":"three"}\n{"sku":"s4","title":"four"}\n', headers: { "content-type": "application/x-ndjson" } });
    expect(lines.json).toEqual({ count: 2, ids: ["s3", "s4"] });

    const mismatch = await api("PUT", "/v1/objects/s5", writer, { body: JSON.stringify({ id: "other" }), headers: { "content-type": "application/json" } });
    expect(mismatch.status).toBe(422);
    expect(mismatch.json.errors[0].code).toBe("ID_MISMATCH");
    for (const id of ["serve%2Fone", "s1", "s2"]) expect((await api("DELETE", `/v1/objects/${id}`)).status).toBe(200);
    const json = { "content-type": "application/json" };
    const many = (body: unknown) => api("DELETE", "/v1/objects", writer, { body: JSON.stringify(body), headers: json });
    expect((await many({ ids: ["s3", "nope"] })).status).toBe(404); // all or none
    expect((await many({ ids: ["s3", "s4"] })).json).toEqual({ count: 2, deleted: ["s3", "s4"] });
    expect((await many({ ids: "s3" })).status).toBe(422);
    const unnamed = await api("POST", "/v1/objects", writer, { body: JSON.stringify([{ sku: "k1" }, { sku: "k2" }]), headers: json });
    expect([unnamed.status, unnamed.json.errors[0].code]).toEqual([422, "NO_ID_FIELD"]);
    // (in the API's terms, not the CLI's flags)
    expect(unnamed.json.errors[0].message).toBe('body:1: no "id" field; did you mean ?id_field=sku? (all 2 objects without an id have a unique "sku")');
    expect(unnamed.json.errors[0].hint).toContain("?generate_ids=true");
    expect(unnamed.json.errors[0].hint).not.toContain("--");
    const gone = await api("GET", "/v1/objects/s1");
    expect(gone.status).toBe(404);
    expect(gone.json.errors[0].code).toBe("OBJECT_NOT_FOUND");
  });

  it("adds all or nothing: a malformed line anywhere adds no object, and says where", async () => {
    const before = (await cli(["objects", "list", "--limit", "10000"])).objects.length;
    const body = '{"id":"ok1","title":"fine"}\n{"id":"ok2","title":"fine"}\n{"id":"bad", "title": }\n';
    const answer = await api("POST", "/v1/objects", writer, { body, headers: { "content-type": "application/x-ndjson" } });
    expect(answer.status).toBe(422);
    expect(answer.json.errors[0].message).toMatch(/^body:3: /);
    expect((await cli(["objects", "list", "--limit", "10000"])).objects.length).toBe(before);
  });
});

describe("keys", () => {
  it("answers a missing, wrong, revoked or malformed key exactly as an unknown path", async () => {
    const unknownPath = await api("GET", "/v1/nothing-here", writer);
    expect(unknownPath.status).toBe(404);
    for (const key of [null, "ssk_key_aaaaaaaaaaaa_" + "A".repeat(43), revoked, "not-a-key", `${writer}x`]) {
      for (const [method, path] of [["GET", `/v1/indexes/${indexId}/search?query=x`], ["POST", "/v1/indexes"], ["GET", "/v1/indexes/nope"], ["PATCH", "/v1/objects"]] as const) {
        const answer = await api(method, path, key);
        expect(answer.status, `${key} ${method} ${path}`).toBe(404);
        expect(answer.text).toBe(unknownPath.text);
      }
    }
    const lowercase = await call(`${server.url}/v1/indexes`, null, { headers: { authorization: `bearer ${writer}` } });
    expect(lowercase.status).toBe(200);
  });

  it("lets a read-only key search and read, not write (403)", async () => {
    expect((await api("GET", `/v1/indexes/${indexId}/search?query=x`, reader)).status).toBe(200);
    for (const [method, path] of [["POST", "/v1/indexes"], ["DELETE", `/v1/indexes/${indexId}`], ["POST", "/v1/objects"], ["PUT", "/v1/objects/x"], ["DELETE", "/v1/objects/photosynthesis"], ["DELETE", "/v1/objects"]] as const) {
      const answer = await api(method, path, reader, { body: "{}", headers: { "content-type": "application/json" } });
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.json.errors[0].code).toBe("READ_ONLY_KEY");
    }
    expect((await cli(["index", "list"])).indexes.map((index: { id: string }) => index.id)).toContain(indexId);
  });

  it("takes a key revoked by the CLI out of use at the next request", async () => {
    const key = await cli(["keys", "create"]);
    expect((await api("GET", "/v1/indexes", key.key)).status).toBe(200);
    await cli(["keys", "revoke", key.id]);
    expect((await api("GET", "/v1/indexes", key.key)).status).toBe(404);
  });
});

describe("statuses", () => {
  it("gives every failure its status and the errors body, never a stack trace", async () => {
    const json = { "content-type": "application/json" };
    const cases: [string, string, RequestInit, number, string][] = [
      ["GET", "/v1/indexes/nope/search?query=x", {}, 404, "INDEX_NOT_FOUND"],
      ["GET", `/v1/indexes/${indexId}/search`, {}, 422, "INVALID_PARAMETER"],
      ["GET", `/v1/indexes/${indexId}/search?query=x&limit=abc`, {}, 422, "INVALID_PARAMETER"],
      ["GET", `/v1/indexes/${indexId}/search?query=x&limit=5000`, {}, 422, "INVALID_PARAMETER"],
      ["GET", `/v1/indexes/${indexId}/search?query=x&limit=1&limit=2`, {}, 422, "INVALID_PARAMETER"],
      ["GET", `/v1/indexes/${indexId}/search?query=x&limt=2`, {}, 422, "INVALID_PARAMETER"],
      ["GET", `/v1/indexes/${indexId}/search?query=x&filter_query=${encodeURIComponent("nofield:1")}`, {}, 422, "INVALID_FILTER"],
      ["GET", `/v1/indexes/${indexId}/search?query=x&result_fields=highlights&results_fields=highlights`, {}, 422, "INVALID_PARAMETER"],
      ["POST", "/v1/indexes", { body: '{"configuration": ', headers: json }, 422, "INVALID_JSON"],
      ["POST", "/v1/indexes", { body: "", headers: json }, 422, "EMPTY_BODY"],
      ["POST", "/v1/indexes", { body: "a=b", headers: { "content-type": "application/x-www-form-urlencoded" } }, 415, "UNSUPPORTED_MEDIA_TYPE"],
      ["POST", "/v1/indexes", { body: JSON.stringify({ configuration: { index_type: { name: "text" } }, pad: "x".repeat(1_100_000) }), headers: json }, 413, "BODY_TOO_LARGE"],
      ["POST", "/v1/objects", { body: JSON.stringify(Array.from({ length: 1200 }, (_, i) => ({ id: `big-${i}`, t: "y".repeat(1000) }))), headers: json }, 413, "BODY_TOO_LARGE"],
      ["PATCH", "/v1/indexes", {}, 405, "METHOD_NOT_ALLOWED"],
      ["POST", "/v1/indexes", { body: JSON.stringify({ name: "articles", configuration: { index_type: { name: "text" } } }), headers: json }, 409, "INDEX_NAME_TAKEN"],
      ["GET", "/v1/objects/nope", {}, 404, "OBJECT_NOT_FOUND"],
      ["GET", "/v1/objects?limit=0", {}, 422, "INVALID_PARAMETER"],
      ["GET", "/v1/objects/a%00b", {}, 404, "OBJECT_NOT_FOUND"],
      ["PUT", "/v1/objects/%ED%A0%80", { body: "{}", headers: json }, 422, "INVALID_PATH"],
      ["GET", "/v1/objects/%", {}, 422, "INVALID_PATH"],
      ["POST", "/v1/indexes", { body: JSON.stringify({ configuration: { index_type: { name: "text" }, model: "/etc" } }), headers: json }, 422, "MODEL_FOLDER_NOT_ALLOWED"],
      ["POST", "/v1/objects", { body: '{"id":"csrf"}', headers: { origin: "https://evil.example" } }, 403, "ORIGIN_NOT_ALLOWED"],
    ];
    for (const [method, path, init, status, code] of cases) {
      const answer = await api(method, path, writer, init);
      expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(status);
      expect(answer.json.errors[0].code, `${method} ${path}`).toBe(code);
      expect(answer.text).not.toMatch(/\n\s+at /);
    }
    const missing = await api("GET", `/v1/indexes/${indexId}/search?limit=2`, writer);
    expect(missing.json.errors[0].message).toBe("Query parameter query: required, but missing");
    const allow = await api("PATCH", "/v1/indexes/x", writer);
    expect(allow.headers.get("allow")).toBe("GET, HEAD, DELETE");
  });

  it("does not list the project's indexes to a client naming an unknown one; the CLI still does", async () => {
    for (const [method, path] of [["GET", "/v1/indexes/nope"], ["GET", "/v1/indexes/nope/status"], ["GET", "/v1/indexes/nope/search?query=x"], ["DELETE", "/v1/indexes/nope"]] as const) {
      const answer = await api(method, path, writer);
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.json.errors).toEqual([{ code: "INDEX_NOT_FOUND", message: 'Index "nope" not found', hint: "GET /v1/indexes lists the indexes." }]);
    }
    // The same error for this machine's user, answered by the server over its local socket, and in process.
    for (const args of [["search", "nope", "x"], ["search", "nope", "x", "--in-process"], ["index", "get", "nope"]]) {
      const local = await runCli(["--project", project, "--json", ...args]);
      expect(local.exitCode, local.stderr).toBe(3);
      expect(JSON.parse(local.stderr).errors[0].hint).toMatch(/^Known indexes: .*\barticles\b/);
    }
  });

  it("answers a streamed body that grows past the limit with 413 and adds nothing", async () => {
    const chunk = new TextEncoder().encode(`${JSON.stringify({ title: "z".repeat(10_000) })}\n`);
    let sent = 0;
    const body = new ReadableStream({
      pull(controller) {
        if (sent++ < 200) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const before = (await cli(["objects", "list", "--limit", "10000"])).objects.length;
    const answer = await call(`${server.url}/v1/objects`, writer, { method: "POST", body, headers: { "content-type": "application/x-ndjson" }, duplex: "half" } as RequestInit).catch((error: Error) => ({ status: 0, text: error.message, json: null }));
    // The server answers 413 as soon as the limit passes (a client may see the connection closed first).
    if (answer.status !== 0) expect(answer.status).toBe(413);
    expect((await cli(["objects", "list", "--limit", "10000"])).objects.length).toBe(before);
  });

  it("serves the health check and the OpenAPI document without a key; HEAD as GET without a body", async () => {
    expect((await api("GET", "/healthz", null)).json).toEqual({ status: "ok" });
    expect([200, 503]).toContain((await api("GET", "/readyz", null)).status);
    const document = await api("GET", "/v1/openapi.json", null);
    expect(document.json.openapi).toBe("3.1.0");
    const head = await call(`${server.url}/v1/indexes`, writer, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.text).toBe("");
  });

  it("answers match the OpenAPI document's schemas for their route and status", async () => {
    const document = (await call(`${server.url}/v1/openapi.json`, null)).json;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addSchema(document, "openapi");
    const template = (path: string) =>
      Object.keys(document.paths).find((candidate) => new RegExp(`^${candidate.replace(/\{\w+\}/g, "[^/]+")}$`).test(path));
    let checked = 0;
    for (const { method, path, status, json } of seen) {
      if (method === "HEAD") continue;
      const operations = document.paths[template(path) ?? ""];
      const operation = operations?.[method.toLowerCase()];
      // Unknown paths and methods answer the generic 404/405, whose schema is Error.
      const ref = operation?.responses?.[String(status)]?.content?.["application/json"]?.schema?.$ref ?? "#/components/schemas/Error";
      expect(operation === undefined || operation.responses[String(status)] !== undefined, `${method} ${path} ${status} is documented`).toBe(true);
      const validate = ajv.getSchema(`openapi${ref}`);
      expect(validate, ref).toBeDefined();
      expect(validate?.(json), `${method} ${path} ${status}: ${JSON.stringify(validate?.errors)}`).toBe(true);
      checked++;
    }
    expect(checked).toBeGreaterThan(60);
    // Every route was exercised by the tests above.
    const exercised = new Set(seen.map(({ method, path }) => `${method} ${template(path)}`));
    for (const [path, operations] of Object.entries(document.paths)) for (const method of Object.keys(operations as object)) expect(exercised, `${method} ${path}`).toContain(`${method.toUpperCase()} ${path}`);
  });

  it("logs one JSON line per request with the path but no query values, and never a key", () => {
    const lines = server.stderr().trim().split("\n").map((line) => JSON.parse(line));
    const searches = lines.filter((line) => line.method === "GET" && String(line.path).endsWith("/search?query&limit"));
    expect(searches.length).toBeGreaterThan(0);
    for (const line of searches) expect(typeof line.ms).toBe("number");
    expect(lines.some((line) => line.status === 403 && line.key?.startsWith("key_"))).toBe(true);
    for (const secret of [writer, reader, revoked, "plants"]) expect(server.stderr()).not.toContain(secret);
  });
});

describe("serving", () => {
  it("refuses to start without a key, and without keys off loopback", async () => {
    const empty = tempProject();
    const none = await runCli(["--project", empty, "--json", "serve", "--port", "0"]);
    expect(none.exitCode).toBe(2);
    expect(JSON.parse(none.stderr).errors[0].code).toBe("NO_KEYS");
    const open = await runCli(["--project", empty, "--json", "serve", "--port", "0", "--no-auth", "--host", "0.0.0.0"]);
    expect(open.exitCode).toBe(2);
    expect(JSON.parse(open.stderr).errors[0].code).toBe("AUTH_REQUIRED");
  });

  it("serves without keys on loopback with --no-auth, and answers 503 beyond its search queue", async () => {
    const open = await serve(project, ["--no-auth", "--max-searches", "1", "--max-queued-searches", "1", "--no-access-log"]);
    try {
      expect((await call(`${open.url}/v1/indexes`, null)).status).toBe(200);
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => call(`${open.url}/v1/indexes/${indexId}/search?query=energy%20${i}`, null)));
      const statuses = answers.map((answer) => answer.status);
      expect(statuses).toContain(200);
      expect(statuses).toContain(503);
      const busy = answers.find((answer) => answer.status === 503);
      expect(busy?.json.errors[0].code).toBe("BUSY");
      expect(busy?.headers.get("retry-after")).toBe("1");
      expect(open.stderr()).not.toMatch(/"method"/);
    } finally {
      expect(await open.stop()).toBe(0);
    }
  });

  it("--no-worker (a replica): an add is stored and left to `semsearch worker`, never indexed by a worker it starts", async () => {
    const own = tempProject();
    await cliJson(own, ["objects", "add", "-"], { input: '{"id":"a","title":"first"}' });
    const { id } = await cliJson(own, ["index", "create", "--searchable", "title", "--wait"]);
    await waitUntil(() => !existsSync(path.join(own, "worker.lock")), "the worker's exit");
    const replica = await serve(own, ["--no-auth", "--no-worker"]);
    try {
      const put = await call(`${replica.url}/v1/objects/b`, null, { method: "PUT", body: JSON.stringify({ title: "second" }), headers: { "content-type": "application/json" } });
      expect(put.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(existsSync(path.join(own, "worker.lock"))).toBe(false);
      expect((await call(`${replica.url}/v1/indexes/${id}`, null)).json.status).toMatchObject({ UPLOADED: 1, READY: 1 });
      expect(existsSync(path.join(own, "worker.lock"))).toBe(false);
    } finally {
      expect(await replica.stop()).toBe(0);
    }
  });

  it("finishes a batch add in flight on SIGTERM, then exits 0: every object added", async () => {
    const open = await serve(project, ["--no-auth"]);
    const count = 300;
    const line = (i: number) => `${JSON.stringify({ id: `term-${i}`, title: `object ${i}` })}\n`;
    const add = rawRequest(open.url, "POST", "/v1/objects", { "content-type": "application/x-ndjson" });
    // The server has read the request's head: the request is in flight (a connection whose request
    // has not begun is idle, and closed at once by a stop).
    await add.continued;
    for (let i = 0; i < count / 2; i++) add.send(line(i));
    open.child.kill("SIGTERM");
    // It stops accepting, and this request goes on: the rest of its body is sent after the stop began.
    await waitUntil(() => /"event":"stopping"/.test(open.stderr()), "the server to begin stopping");
    expect(open.stderr()).toMatch(/"event":"stopping","signal":"SIGTERM","in_flight":1\b/);
    for (let i = count / 2; i < count; i++) add.send(line(i));
    add.end();
    const answer = await add.answer;
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json.count).toBe(count);
    expect(await open.exited).toBe(0);
    expect(open.stderr()).toMatch(/"event":"stopped","finished":true/);
    const stored = (await cli(["objects", "list", "--limit", "10000"])).objects.filter((o: { id: string }) => o.id.startsWith("term-"));
    expect(stored).toHaveLength(count);
  });

  /** Two adds whose bodies are being sent slowly: each has sent its first object, and the server is reading. */
  async function slowAdds(url: string, prefix: string): Promise<RawRequest[]> {
    const slow = [0, 1].map(() => rawRequest(url, "POST", "/v1/objects", { "content-type": "application/x-ndjson" }));
    for (const [i, request] of slow.entries()) {
      await request.continued;
      request.send(`${JSON.stringify({ id: `${prefix}-${i}`, title: "slow" })}\n`);
    }
    return slow;
  }

  const loggedAdds = (served: Served) =>
    served
      .stderr()
      .split("\n")
      .filter((line) => line.includes('"method":"POST","path":"/v1/objects"'))
      .map((line) => JSON.parse(line).status as number);

  it("adds nothing when the client goes away mid-body, logs 499 and stays up, while other adds are being sent", async () => {
    const open = await serve(project, ["--no-auth"]);
    try {
      // Before the fix, the two slow adds held both write places, and the body of this one was read
      // only after they finished: its client gone, it was taken as empty (200) or, while the engine
      // started reading, destroyed with no listener, which ended the server (exit 1).
      const slow = await slowAdds(open.url, "stay");
      const gone = rawRequest(open.url, "POST", "/v1/objects", { "content-type": "application/x-ndjson" });
      await gone.continued;
      for (let i = 0; i < 50; i++) gone.send(`${JSON.stringify({ id: `gone-${i}`, title: "x" })}\n`);
      gone.drop();
      const whileSending = await drip(slow, () => loggedAdds(open).length > 0);
      expect(whileSending, "the dropped add was logged while the others were still being sent").toBe(true);
      expect(loggedAdds(open)).toEqual([499]);
      for (const request of slow) expect((await request.answer).status).toBe(200);
      expect(loggedAdds(open)).toEqual([499, 200, 200]);
      expect((await call(`${open.url}/healthz`, null)).status).toBe(200);
      const stored = (await cli(["objects", "list", "--limit", "10000"])).objects.map((o: { id: string }) => o.id);
      expect(stored.filter((id: string) => id.startsWith("gone-"))).toEqual([]);
      expect(stored.filter((id: string) => id.startsWith("stay-")).sort()).toEqual(["stay-0", "stay-1"]);
    } finally {
      expect(await open.stop()).toBe(0);
    }
  });

  it("/readyz: 200 once the models are loaded and the indexes prewarmed, with no key; 503 NOT_READY when that failed", async () => {
    const ready = await serve(project);
    try {
      await waitUntil(async () => (await call(`${ready.url}/readyz`, null)).status === 200, "the server to be ready");
      expect((await call(`${ready.url}/readyz`, null)).json).toEqual({ status: "ready" });
      expect(ready.stderr()).toContain('"event":"warm"');
    } finally {
      expect(await ready.stop()).toBe(0);
    }
    const failed = await serve(project, [], { SEMSEARCH_FAILPOINT: "serve:warm-up:throw" });
    try {
      await waitUntil(() => failed.stderr().includes('"event":"not warmed up"'), "the warm-up to fail");
      const answer = await call(`${failed.url}/readyz`, null);
      expect(answer.status).toBe(503);
      expect(answer.json.errors[0].code).toBe("NOT_READY");
      expect((await call(`${failed.url}/healthz`, null)).status).toBe(200); // alive, not ready
    } finally {
      expect(await failed.stop()).toBe(0);
    }
  });

  it("answers an add while two others are still being sent slowly: a slow client holds no write place", async () => {
    const open = await serve(project, ["--no-auth"]);
    try {
      const slow = await slowAdds(open.url, "drip");
      let answered = false;
      const prompt = call(`${open.url}/v1/objects`, null, { method: "POST", body: JSON.stringify({ id: "prompt", title: "fast" }), headers: { "content-type": "application/json" } }).finally(() => (answered = true));
      const whileSending = await drip(slow, () => answered);
      expect(whileSending, "the third add was answered while the slow ones were still being sent").toBe(true);
      expect((await prompt).json).toEqual({ count: 1, ids: ["prompt"] });
      for (const request of slow) expect((await request.answer).json).toMatchObject({ count: 1 });
    } finally {
      expect(await open.stop()).toBe(0);
    }
  });
});

describe("image files named by objects added over HTTP", () => {
  it("are read only inside --image-root, and not at all without one", async () => {
    const images = tempProject();
    const clip = path.join(ROOT, "fixtures", "models", "tiny-clip");
    const folder = path.join(ROOT, "fixtures", "images");
    const index = (await cliJson(images, ["index", "create", "--type", "image", "--model", clip, "--image-fields", "photo"])).id;
    const add = async (url: string, objects: object[]) => {
      const answer = await call(`${url}/v1/objects`, null, { method: "POST", body: JSON.stringify(objects), headers: { "content-type": "application/json" } });
      expect(answer.status, answer.text).toBe(200);
    };
    const closed = await serve(images, ["--no-auth", "--no-access-log"]);
    await add(closed.url, [{ id: "relative", photo: "red.png" }, { id: "absolute", photo: path.join(folder, "red.png") }, { id: "file-url", photo: `file://${path.join(folder, "red.png")}` }]);
    expect(await closed.stop()).toBe(0);
    const rooted = await serve(images, ["--no-auth", "--no-access-log", "--image-root", folder]);
    await add(rooted.url, [{ id: "inside", photo: "blue.png" }, { id: "escape", photo: "../../package.json.png" }, { id: "outside", photo: "/etc/hostname.png" }]);
    expect(await rooted.stop()).toBe(0);
    const wait = await runCli(["--project", images, "--json", "index", "status", index, "--wait"]);
    expect(wait.exitCode).toBe(7); // objects failed
    const state = async (id: string) => (await cliJson(images, ["objects", "get", id])).status.indexes[0];
    for (const id of ["relative", "absolute", "file-url"]) {
      expect(await state(id)).toMatchObject({ status: "ERROR", error: expect.stringContaining("local image files are not read for objects added over HTTP") });
    }
    for (const id of ["escape", "outside"]) expect(await state(id)).toMatchObject({ status: "ERROR", error: expect.stringContaining("outside the folder the server reads images from") });
    expect(await state("inside")).toMatchObject({ status: "READY" });
  });
});
