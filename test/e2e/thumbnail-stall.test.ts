/**
 * Thumbnails of `semsearch serve` against an image host that stalls (issue 40, item 2): a real
 * server in process on 127.0.0.1 over a real project with an image index, real clients that leave,
 * and image hosts on 127.0.0.1 that accept and answer nothing until the test says (a PNG, or a reset
 * connection), counting the requests they get. The thumbnails' time limit is set far beyond the
 * tests' waits (SEMSEARCH_THUMBNAIL_TIMEOUT), so a fetch ends only when the host answers or the
 * server aborts it: what the tests see never depends on how fast the machine is. Before the fix,
 * 300 requests for one stalled image held every thumbnail for minutes (a local file's, and 404s
 * that need no read) and each made its own fetch.
 */
import { cpSync, readFileSync } from "node:fs";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Engine } from "../../src/engine/index.js";
import type { AccessEntry } from "../../src/server/app.js";
import { startServer, type RunningServer } from "../../src/server/serve.js";
import { ROOT } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { waitFor, within } from "../helpers/wait.js";

const CLIP = path.join(ROOT, "fixtures", "models", "tiny-clip");
const RED = path.join(ROOT, "fixtures", "images", "red.png");

/**
 * An image host on 127.0.0.1 that accepts every connection and answers nothing until `release()`
 * (then a PNG to what it holds, and to what comes after) or `cut()` (it resets the connections it
 * holds); counts requests by path and connections open.
 */
class StalledHost {
  readonly requests: string[] = [];
  private readonly held: ServerResponse[] = [];
  private readonly sockets = new Set<Socket>();
  private released = false;
  private readonly server = http.createServer((request: IncomingMessage, response: ServerResponse) => {
    this.requests.push(new URL(request.url ?? "/", "http://x").pathname);
    if (this.released) this.answer(response);
    else this.held.push(response);
  });
  url = "";

  async start(): Promise<void> {
    this.server.on("connection", (socket: Socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Requests received for `pathname`. */
  count(pathname: string): number {
    return this.requests.filter((seen) => seen === pathname).length;
  }

  /** Connections open now (the client closes its own when it gives up or is aborted). */
  open(): number {
    return this.sockets.size;
  }

  cut(): void {
    for (const response of this.held.splice(0)) response.socket?.destroy();
  }

  release(): void {
    this.released = true;
    for (const response of this.held.splice(0)) this.answer(response);
  }

  private answer(response: ServerResponse): void {
    if (response.destroyed) return;
    response.writeHead(200, { "content-type": "image/png" });
    response.end(PNG_BYTES);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

let PNG_BYTES: Buffer;

interface Answer {
  status: number;
  code?: string;
}

/** A GET on a connection of its own, which `drop()` closes (a client that leaves). */
function get(url: string): { done: Promise<Answer>; drop: () => void } {
  const request = http.get(url, { agent: false });
  const done = new Promise<Answer>((resolve, reject) => {
    request.on("response", (response) => {
      let text = "";
      response.setEncoding("latin1");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => {
        let code: string | undefined;
        try {
          code = (JSON.parse(text) as { errors?: { code: string }[] }).errors?.[0]?.code;
        } catch {
          // a PNG
        }
        resolve({ status: response.statusCode ?? 0, ...(code === undefined ? {} : { code }) });
      });
    });
    request.on("error", reject);
  });
  done.catch(() => {});
  return { done, drop: () => request.destroy() };
}

describe("thumbnails while an image host stalls", () => {
  const stalled = new StalledHost();
  const held = new StalledHost();
  let engine: Engine;
  let server: RunningServer;
  let localImage = "";
  const log: AccessEntry[] = [];
  const timeout = process.env.SEMSEARCH_THUMBNAIL_TIMEOUT;
  const image = (host: StalledHost, name: string) => `${host.url}/${name}.png`;
  const thumbnail = (id: string, value: string, size = 64) => `${server.url}/v1/objects/${encodeURIComponent(id)}/thumbnail?${new URLSearchParams({ image: value, size: String(size) })}`;
  const cancelled = () => log.filter((entry) => entry.status === 499).length;

  beforeAll(async () => {
    process.env.SEMSEARCH_THUMBNAIL_TIMEOUT = "3600";
    PNG_BYTES = readFileSync(RED);
    await stalled.start();
    await held.start();
    const data = tempDir();
    localImage = path.join(data, "red.png");
    cpSync(RED, localImage);
    const objects = [
      { id: "local", caption: "a red square", photo: localImage },
      { id: "stalled", caption: "never comes", photo: image(stalled, "a") },
      { id: "stalled-b", caption: "never comes either", photo: image(stalled, "b") },
      ...["x", "y1", "y2", "y3", "y4", "y5", "y6"].map((name) => ({ id: name, caption: `held ${name}`, photo: image(held, name) })),
    ];
    // (no worker: nothing but the thumbnails fetches the images)
    engine = new Engine({ projectDir: path.join(tempDir(), "p"), noWorker: true });
    await engine.addObjects([{ source: "<test>", text: objects.map((object) => JSON.stringify(object)).join("\n") }]);
    await engine.createIndex({ configuration: { index_type: { name: "image" }, model: CLIP, fields: { images: ["photo"] } } });
    server = await startServer(engine, { host: "127.0.0.1", port: 0, checkKey: null, onRequest: (entry) => log.push(entry) });
    // The first thumbnail loads the image code: out of the way of what the tests wait for.
    expect((await get(thumbnail("local", localImage)).done).status).toBe(200);
  });

  afterAll(async () => {
    if (timeout === undefined) delete process.env.SEMSEARCH_THUMBNAIL_TIMEOUT;
    else process.env.SEMSEARCH_THUMBNAIL_TIMEOUT = timeout;
    held.release();
    stalled.cut();
    await server?.stop();
    await stalled.close();
    await held.close();
  });

  beforeEach(() => {
    log.length = 0;
    held.requests.length = 0;
  });

  it("300 requests for an image that never comes share one fetch; a local thumbnail and 404s that need no read answer meanwhile; the failure is remembered", async () => {
    const clients = Array.from({ length: 300 }, () => get(thumbnail("stalled", image(stalled, "a"))));
    await waitFor("the stalled host to get the thumbnail's request", () => stalled.count("/a.png") >= 1);
    // (bounded waits: before the fix, these waited behind 256 queued thumbnails, 4 at a time, 4 s each)
    const picture = await within("a local file's thumbnail", get(thumbnail("local", localImage)).done, 30_000);
    expect(picture.status).toBe(200);
    const caption = await within("a 404 that needs no read", get(thumbnail("local", "a red square")).done, 30_000);
    expect(caption).toEqual({ status: 404, code: "IMAGE_UNAVAILABLE" });
    const missing = await within("a 404 for a value the object lacks", get(thumbnail("local", "/etc/passwd")).done, 30_000);
    expect(missing).toEqual({ status: 404, code: "IMAGE_NOT_FOUND" });
    // They answered while the stalled fetch was pending: the one fetch of all 300.
    expect([stalled.count("/a.png"), stalled.open()]).toEqual([1, 1]);

    stalled.cut();
    const answers = await Promise.all(clients.map((client) => client.done));
    expect(answers.filter((answer) => answer.code !== "IMAGE_UNAVAILABLE")).toEqual([]);
    // Remembered: asked again, at any size, it is answered without another fetch.
    for (const size of [64, 128]) expect(await get(thumbnail("stalled", image(stalled, "a"), size)).done).toEqual({ status: 404, code: "IMAGE_UNAVAILABLE" });
    expect(stalled.count("/a.png")).toBe(1);
  });

  it("many sizes of an image that never comes: 4 fetches from its host at once, and those waiting are answered from their failure", async () => {
    const clients = Array.from({ length: 12 }, (_, i) => get(thumbnail("stalled-b", image(stalled, "b"), 64 + i)));
    await waitFor("the stalled host to get 4 requests for b", () => stalled.count("/b.png") >= 4);
    // A local file's thumbnail is made meanwhile; the host still has only 4 (each size its own fetch).
    expect((await within("a local file's thumbnail", get(thumbnail("local", localImage, 100)).done, 30_000)).status).toBe(200);
    expect(stalled.count("/b.png")).toBe(4);
    // Its fetches fail: every other size is answered from the failure, without a fetch.
    stalled.cut();
    const answers = await Promise.all(clients.map((client) => client.done));
    expect(answers.filter((answer) => answer.code !== "IMAGE_UNAVAILABLE")).toEqual([]);
    expect(stalled.count("/b.png")).toBe(4);
  });

  it("clients that leave leave the queue; a shared fetch is aborted when its last waiter leaves, and only then", async () => {
    // Four requests for x (sharing one fetch) and one each for y1…y6: the host's 4 places taken, 3 waiting.
    const xs = Array.from({ length: 4 }, () => get(thumbnail("x", image(held, "x"))));
    await waitFor("the held host to get x", () => held.count("/x.png") >= 1);
    const ys = ["y1", "y2", "y3", "y4", "y5", "y6"].map((name) => get(thumbnail(name, image(held, name))));
    await waitFor("the held host to get 4 requests", () => held.requests.length >= 4);
    // Meanwhile a local file's thumbnail is made.
    expect((await within("a local file's thumbnail", get(thumbnail("local", localImage, 96)).done, 30_000)).status).toBe(200);
    expect(held.count("/x.png")).toBe(1);
    expect(held.requests.length).toBe(4);
    // The waiting ones leave: nothing of theirs is ever fetched.
    const fetching = new Set(held.requests.map((seen) => seen.slice(1, -4)));
    const waiting = ys.filter((_, i) => !fetching.has(`y${i + 1}`));
    expect(waiting.length).toBe(3);
    for (const client of waiting) client.drop();
    await waitFor("the waiting clients' requests to end", () => cancelled() >= 3);
    // Three of x's four leave: its fetch goes on for the fourth.
    for (const client of xs.slice(0, 3)) client.drop();
    await waitFor("three of x's clients' requests to end", () => cancelled() >= 6);
    expect(held.open()).toBe(4);
    // The fetching ys leave: their fetches are aborted (their connections close), and none waiting starts.
    for (const client of ys) client.drop();
    await waitFor("the held host to keep only x's connection", () => held.open() === 1);
    expect(held.requests.length).toBe(4);
    // x's last client gets its picture, from the one fetch.
    held.release();
    expect((await within("x's thumbnail", (xs[3] as { done: Promise<Answer> }).done)).status).toBe(200);
    expect(held.count("/x.png")).toBe(1);
  });
});
