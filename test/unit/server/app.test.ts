/** The app in process (`app.request`): the error boundary and CORS. */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Engine } from "../../../src/engine/index.js";
import { createApp } from "../../../src/server/app.js";
import { tempDir } from "../../helpers/temp.js";

const LOCAL = { host: "127.0.0.1:8080" };

function engine(): Engine {
  return new Engine({ projectDir: path.join(tempDir(), "p") });
}

describe("the error boundary", () => {
  it("answers a bug with 500 and no detail, and logs its stack", async () => {
    const broken = engine();
    broken.listIndexes = async () => {
      throw new TypeError("secret internals at /home/x");
    };
    const logged: unknown[] = [];
    const app = createApp(broken, { checkKey: null, onServerError: (_error, cause) => logged.push(cause) });
    const response = await app.request("/v1/indexes", { headers: LOCAL });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ errors: [{ code: "INTERNAL", message: "The server failed to answer this request; its log has the details" }] });
    expect((logged[0] as Error).stack).toContain("secret internals");
  });

  it("answers an environment fault with 503 saying what failed", async () => {
    const full = engine();
    full.listIndexes = async () => {
      throw Object.assign(new Error("no space"), { code: "ENOSPC" });
    };
    const response = await createApp(full, { checkKey: null }).request("/v1/indexes", { headers: LOCAL });
    expect(response.status).toBe(503);
    expect(((await response.json()) as { errors: unknown[] }).errors[0]).toMatchObject({ code: "ENOSPC", message: expect.stringContaining("the disk is full") });
  });
});

describe("CORS", () => {
  const key = { keyId: "key_x", readOnly: false };
  it("answers preflights of allowed origins without a key, and marks answers for them", async () => {
    const app = createApp(engine(), { checkKey: (k) => (k === "good" ? key : null), corsOrigins: ["https://app.example"] });
    const preflight = await app.request("/v1/indexes", { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "GET", "access-control-request-headers": "authorization" } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(preflight.headers.get("access-control-allow-headers")).toMatch(/Authorization/);
    const answer = await app.request("/v1/indexes", { headers: { origin: "https://app.example", authorization: "Bearer good" } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("access-control-allow-origin")).toBe("https://app.example");
    const other = await app.request("/v1/indexes", { headers: { origin: "https://evil.example", authorization: "Bearer good" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("sends no CORS headers unless origins are given", async () => {
    const answer = await createApp(engine(), { checkKey: null }).request("/v1/indexes", { headers: { ...LOCAL, origin: "https://app.example" } });
    expect(answer.headers.get("access-control-allow-origin")).toBeNull();
    expect(answer.status).toBe(403);
  });
});

describe("browsers", () => {
  it.each([
    ["127.0.0.1:8080", 200],
    ["localhost", 200],
    ["[::1]:9000", 200],
    ["evil.example:8080", 403],
    ["127.0.0.1.evil.example", 403],
    [undefined, 403],
  ])("a server without keys answers Host %s with %i", async (host, status) => {
    const headers: Record<string, string> = host === undefined ? {} : { host };
    const answer = await createApp(engine(), { checkKey: null }).request("/v1/indexes", { headers });
    expect(answer.status).toBe(status);
    if (status === 403) expect(((await answer.json()) as { errors: { code: string }[] }).errors[0]?.code).toBe("HOST_NOT_ALLOWED");
  });

  it("refuses requests from web pages of origins not given with --cors-origin, even with a key", async () => {
    const app = createApp(engine(), { checkKey: () => ({ keyId: "key_x", readOnly: false }), corsOrigins: ["https://app.example"] });
    const page = await app.request("/v1/objects", { method: "POST", body: '{"id":"x"}', headers: { authorization: "Bearer k", origin: "https://evil.example" } });
    expect(page.status).toBe(403);
    expect(((await page.json()) as { errors: { code: string }[] }).errors[0]?.code).toBe("ORIGIN_NOT_ALLOWED");
  });
});

describe("the search page's own origin", () => {
  const key = { keyId: "key_x", readOnly: true };

  it("may call the API when the page is served, as the Host it names; a page elsewhere may not", async () => {
    const app = createApp(engine(), { checkKey: (k) => (k === "good" ? key : null), ui: true });
    const call = (origin: string, host: string) => app.request("/v1/indexes", { headers: { origin, host, authorization: "Bearer good" } });
    expect((await call("http://127.0.0.1:8080", "127.0.0.1:8080")).status).toBe(200);
    expect((await call("http://search.internal:8080", "search.internal:8080")).status).toBe(200);
    // (served through a TLS proxy that keeps the Host)
    expect((await call("https://search.example", "search.example")).status).toBe(200);
    for (const [origin, host] of [["http://evil.example", "127.0.0.1:8080"], ["http://127.0.0.1:8080", "evil.example"], ["https://127.0.0.1:9090", "127.0.0.1:8080"], ["http://127.0.0.1:8080.evil.example", "127.0.0.1:8080"], ["http://127.0.0.1:9090", "127.0.0.1:8080"], ["null", "127.0.0.1:8080"]]) {
      const answer = await call(origin as string, host as string);
      expect(answer.status, `${origin} to ${host}`).toBe(403);
    }
    // without the page, its origin is like any other
    expect((await createApp(engine(), { checkKey: (k) => (k === "good" ? key : null) }).request("/v1/indexes", { headers: { origin: "http://127.0.0.1:8080", host: "127.0.0.1:8080", authorization: "Bearer good" } })).status).toBe(403);
  });

  it("without keys, still only on a loopback name (a rebound name sends its own Host and Origin)", async () => {
    const app = createApp(engine(), { checkKey: null, ui: true });
    expect((await app.request("/v1/indexes", { headers: { origin: "http://localhost:8080", host: "localhost:8080" } })).status).toBe(200);
    const rebound = await app.request("/v1/indexes", { headers: { origin: "http://evil.example:8080", host: "evil.example:8080" } });
    expect(((await rebound.json()) as { errors: { code: string }[] }).errors[0]?.code).toBe("HOST_NOT_ALLOWED");
  });

  it("serves the page with its security headers, and says how to get it when it was not built", async () => {
    const built = `${tempDir()}/`;
    for (const [name, text] of [["index.html", '<meta name="semsearch-auth" content="{{AUTH}}">'], ["main.js", "1"], ["app.css", ""], ["icon.svg", "<svg/>"]]) writeFileSync(`${built}${name}`, text as string);
    const app = createApp(engine(), { checkKey: null, ui: true, uiDir: built });
    const page = await app.request("/", { headers: LOCAL });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await page.text()).toContain('<meta name="semsearch-auth" content="none">');
    expect(await (await app.request("/ui/app.js", { headers: LOCAL })).text()).toBe("1");
    const missing = await createApp(engine(), { checkKey: null, ui: true, uiDir: `${tempDir()}/` }).request("/", { headers: LOCAL });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { errors: { code: string; hint: string }[] }).errors[0]).toMatchObject({ code: "UI_NOT_BUILT", hint: expect.stringContaining("npm run build") });
  });
});
