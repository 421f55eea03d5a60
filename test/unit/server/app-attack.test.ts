/**
 * The app in process (`app.request`), attacked as the search page made it reachable: requests a
 * page elsewhere has the browser send without CORS, and thumbnails crowding out searches.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Engine } from "../../../src/engine/index.js";
import { createApp } from "../../../src/server/app.js";
import { tempDir } from "../../helpers/temp.js";
import { waitFor } from "../../helpers/wait.js";

const LOCAL = { host: "127.0.0.1:8080" };

function engine(): Engine {
  return new Engine({ projectDir: path.join(tempDir(), "p") });
}

async function code(response: Response): Promise<string | undefined> {
  return ((await response.json()) as { errors?: { code: string }[] }).errors?.[0]?.code;
}

describe("requests a web page elsewhere makes without CORS", () => {
  // What Chromium sends: an <img> of another site has no Origin, only Sec-Fetch-*.
  const image = (site: string) => ({ ...LOCAL, "sec-fetch-site": site, "sec-fetch-mode": "no-cors", "sec-fetch-dest": "image" });

  it.each(["cross-site", "same-site"])("are refused from a %s page, on a server without keys", async (site) => {
    const app = createApp(engine(), { checkKey: null, ui: true });
    const answer = await app.request("/v1/objects/red/thumbnail?image=pics%2Fred.png", { headers: image(site) });
    expect(answer.status).toBe(403);
    expect(await code(answer)).toBe("ORIGIN_NOT_ALLOWED");
    const frame = await app.request("/v1/indexes", { headers: { ...LOCAL, "sec-fetch-site": site, "sec-fetch-mode": "navigate", "sec-fetch-dest": "iframe" } });
    expect(frame.status).toBe(403);
  });

  it("pass from the page itself, from the address bar, from a link followed, and from clients that are not browsers", async () => {
    const app = createApp(engine(), { checkKey: null, ui: true });
    for (const headers of [
      { ...LOCAL, origin: "http://127.0.0.1:8080", "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors", "sec-fetch-dest": "empty" },
      { ...LOCAL, "sec-fetch-site": "none", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" },
      { ...LOCAL, "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" },
      LOCAL,
    ]) {
      expect((await app.request("/v1/indexes", { headers })).status, JSON.stringify(headers)).toBe(200);
    }
  });

  it("an allowed --cors-origin still calls with fetch()", async () => {
    const app = createApp(engine(), { checkKey: () => ({ keyId: "key_x", readOnly: true }), corsOrigins: ["https://app.example"] });
    const answer = await app.request("/v1/indexes", { headers: { authorization: "Bearer k", origin: "https://app.example", "sec-fetch-site": "cross-site", "sec-fetch-mode": "cors", "sec-fetch-dest": "empty" } });
    expect(answer.status).toBe(200);
  });

  it("a thumbnail may not be embedded by another origin (Cross-Origin-Resource-Policy)", async () => {
    const stub = engine();
    stub.imageThumbnail = async () => Buffer.from("\x89PNG\r\n\x1a\n", "latin1");
    const answer = await createApp(stub, { checkKey: null }).request("/v1/objects/red/thumbnail?image=pics%2Fred.png", { headers: LOCAL });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("cross-origin-resource-policy")).toBe("same-origin");
  });
});

describe("thumbnails and searches", () => {
  it("thumbnails waiting for slow images hold no place that searches need", async () => {
    // Two tabs of the page ask for 4 thumbnails each, of images on a host that does not answer.
    const stub = engine();
    let started = 0;
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    stub.imageThumbnail = async () => {
      started++;
      await held;
      return Buffer.from("\x89PNG\r\n\x1a\n", "latin1");
    };
    // (no queue for searches: one that cannot start at once is refused, and says so)
    const app = createApp(stub, { checkKey: null, maxSearches: 8, maxQueuedSearches: 0 });
    const thumbnails = Array.from({ length: 8 }, async (_, i) => app.request(`/v1/objects/o${i}/thumbnail?image=a.png`, { headers: LOCAL }));
    await waitFor("thumbnails to start", () => started >= 4);
    const list = await app.request("/v1/objects", { headers: LOCAL });
    expect(list.status, await list.clone().text()).toBe(200);
    release();
    expect((await Promise.all(thumbnails)).map((answer) => answer.status)).toEqual(Array(8).fill(200));
  });
});
