/**
 * Inputs of `npm run bench:images`: distinct, deterministic photo-sized JPEGs (generated with sharp,
 * reused when present), their objects file, a local HTTP server with ETags, and small helpers
 * (a concurrency limiter, a process's peak RSS).
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import sharp from "sharp";
import { generateObjects, seededRandom } from "./generate.js";

/** Photo size (a typical 640 px web photo, 3:2) and JPEG quality of the generated images. */
export const PHOTO = { width: 640, height: 427, quality: 85 } as const;
/** Part of every generated file name: bumped whenever the picture generator changes. */
const GENERATION = "v1";
const SEED = 20240;

export const photoName = (i: number) => `photo-${GENERATION}-${String(i).padStart(5, "0")}.jpg`;

/** Runs `task` over `items` with at most `limit` at once (as the worker's decode step does); results in order. */
export async function mapLimited<T, R>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const run = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await task(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, run));
  return out;
}

/** A smooth random field: a coarse grid of random values, interpolated with smoothstep. */
type Field = (x: number, y: number) => number;

function smoothField(random: () => number, cols: number, rows: number, width: number, height: number): Field {
  const grid = Float32Array.from({ length: (cols + 1) * (rows + 1) }, () => random());
  const at = (cx: number, cy: number) => grid[cy * (cols + 1) + cx] as number;
  const ease = (t: number) => t * t * (3 - 2 * t);
  return (x, y) => {
    const gx = (x / width) * cols;
    const gy = (y / height) * rows;
    const [cx, cy] = [Math.min(cols - 1, Math.floor(gx)), Math.min(rows - 1, Math.floor(gy))];
    const [tx, ty] = [ease(gx - cx), ease(gy - cy)];
    const top = at(cx, cy) + (at(cx + 1, cy) - at(cx, cy)) * tx;
    const bottom = at(cx, cy + 1) + (at(cx + 1, cy + 1) - at(cx, cy + 1)) * tx;
    return top + (bottom - top) * ty;
  };
}

interface Ellipse {
  x: number;
  y: number;
  rx: number;
  ry: number;
  colour: number[];
  alpha: number;
}

/**
 * One picture's RGB pixels: a smooth colour gradient per channel, mid-scale texture, soft-edged
 * ellipses and fine noise, so it compresses like a photo (about 50–100 KB at quality 85).
 */
function renderPhoto(seed: number): Buffer {
  const { width, height } = PHOTO;
  const random = seededRandom(seed);
  const base = [0, 1, 2].map(() => smoothField(random, 3, 2, width, height));
  const texture = smoothField(random, 48, 32, width, height);
  const shapes: Ellipse[] = Array.from({ length: 4 + Math.floor(random() * 8) }, () => ({
    x: random() * width,
    y: random() * height,
    rx: 15 + random() * 140,
    ry: 15 + random() * 110,
    colour: [random() * 255, random() * 255, random() * 255],
    alpha: 0.35 + random() * 0.6,
  }));
  const grain = 14 + random() * 10;
  const [red, green, blue] = base as [Field, Field, Field];
  const rgb = Buffer.alloc(width * height * 3);
  const pixel = new Float32Array(3);
  for (let y = 0; y < height; y++) {
    // only the shapes this row crosses
    const row = shapes.filter((s) => Math.abs(y - s.y) < s.ry);
    for (let x = 0; x < width; x++) {
      const t = (texture(x, y) - 0.5) * 50;
      pixel[0] = 30 + red(x, y) * 195 + t;
      pixel[1] = 30 + green(x, y) * 195 + t;
      pixel[2] = 30 + blue(x, y) * 195 + t;
      for (const s of row) {
        const d = ((x - s.x) / s.rx) ** 2 + ((y - s.y) / s.ry) ** 2;
        if (d >= 1) continue;
        const a = s.alpha * Math.min(1, (1 - d) * 6);
        for (let c = 0; c < 3; c++) pixel[c] = (pixel[c] as number) * (1 - a) + (s.colour[c] as number) * a;
      }
      const noise = (random() + random() - 1) * grain;
      const offset = (y * width + x) * 3;
      // a Uint8Array store wraps out-of-range values around: clamp first
      for (let c = 0; c < 3; c++) rgb[offset + c] = Math.max(0, Math.min(255, (pixel[c] as number) + noise));
    }
  }
  return rgb;
}

/** The `count` bench photos in `dir` (absolute paths), generating the missing ones. */
export async function ensurePhotos(dir: string, count: number, log: (message: string) => void): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const files = Array.from({ length: count }, (_, i) => path.join(dir, photoName(i)));
  const missing = files.map((file, i) => [file, i] as const).filter(([file]) => !existsSync(file));
  if (missing.length) log(`generating ${missing.length} photos (${PHOTO.width}×${PHOTO.height} JPEG q${PHOTO.quality}) in ${dir} …`);
  await mapLimited(missing, 2, async ([file, i]) => {
    const raw = renderPhoto(SEED + i * 7919);
    const jpeg = await sharp(raw, { raw: { width: PHOTO.width, height: PHOTO.height, channels: 3 } }).jpeg({ quality: PHOTO.quality }).toBuffer();
    // written under another name first: an interrupted run leaves no truncated photo to reuse
    writeFileSync(`${file}.tmp`, jpeg);
    renameSync(`${file}.tmp`, file);
  });
  return files;
}

/** Mean file size in KB. */
export function meanKb(files: readonly string[]): number {
  return files.reduce((sum, file) => sum + statSync(file).size, 0) / files.length / 1024;
}

/** The real COCO photos of ../shared/eval, read in place (never copied), when present. */
export function cocoPhotos(root: string): string[] {
  const base = path.join(root, "..", "shared", "eval", "coco-mini-cc");
  if (!existsSync(base)) return [];
  return readdirSync(base)
    .filter((sub) => statSync(path.join(base, sub)).isDirectory())
    .flatMap((sub) => readdirSync(path.join(base, sub)).filter((name) => name.endsWith(".jpg")).map((name) => path.join(base, sub, name)))
    .sort();
}

/** The objects `{id, caption, photo}` of the bench photos, as JSON Lines; captions are generated sentences. */
export function writeObjects(file: string, photos: readonly string[]): void {
  const captions = generateObjects(photos.length, 77);
  const lines = photos.map((photo, i) => JSON.stringify({ id: `img-${i}`, caption: captions[i]?.title, photo }));
  writeFileSync(file, lines.join("\n") + "\n");
}

/** Serves the files of `dir` on 127.0.0.1 (a free port) with a strong ETag, answering If-None-Match with 304. */
export async function servePhotos(dir: string): Promise<{ url: string; close(): Promise<void>; requests: () => number }> {
  let requests = 0;
  const server: Server = createServer((req, res) => {
    requests++;
    const name = decodeURIComponent((req.url ?? "/").slice(1));
    const file = path.join(dir, path.basename(name));
    if (!name.endsWith(".jpg") || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    const stat = statSync(file);
    const etag = `"${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}"`;
    if (req.headers["if-none-match"] === etag) {
      res.writeHead(304, { etag }).end();
      return;
    }
    const body = readFileSync(file);
    res.writeHead(200, { "content-type": "image/jpeg", "content-length": body.byteLength, etag, "cache-control": "no-cache" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A running process's peak resident set (VmHWM) in MB, or null when it is gone. */
export function peakRssMb(pid: number): number | null {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Math.round(Number(match[1]) / 1024) : null;
  } catch {
    return null;
  }
}
