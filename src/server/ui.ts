/**
 * The search page (`GET /` and its files under `/ui/`), built by `npm run build` into `dist/ui`
 * (src/ui holds its source). Everything it needs is served here: no CDN, no web fonts. A strict
 * Content-Security-Policy lets it load only its own script and style, show images only from blob:
 * URLs it made from thumbnails it fetched, and connect only to this server.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The built page's folder: dist/ui next to dist/server. */
const UI_DIR = fileURLToPath(new URL("../ui/", import.meta.url));

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

interface Asset {
  body: Uint8Array;
  type: string;
  etag: string;
}

/** The page's files by URL path; `/` is the page itself, with the server's way of checking keys written in. */
export interface UiAssets {
  get(path: string): Asset | undefined;
}

const FILES: Record<string, [string, string]> = {
  "/ui/app.js": ["main.js", "text/javascript; charset=utf-8"],
  "/ui/app.css": ["app.css", "text/css; charset=utf-8"],
  "/ui/icon.svg": ["icon.svg", "image/svg+xml"],
};

function asset(body: Uint8Array, type: string): Asset {
  return { body, type, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"` };
}

/**
 * The page's files, read once; null when the page was not built (a checkout without `npm run
 * build`: the API works, and `/` says how to get the page).
 */
export function loadUiAssets(options: { auth: boolean; version: string }, dir = UI_DIR): UiAssets | null {
  let html: string;
  const files = new Map<string, Asset>();
  try {
    html = readFileSync(`${dir}index.html`, "utf8");
    for (const [path, [name, type]] of Object.entries(FILES)) files.set(path, asset(readFileSync(`${dir}${name}`), type));
  } catch {
    return null;
  }
  const page = html.replaceAll("{{AUTH}}", options.auth ? "keys" : "none").replaceAll("{{VERSION}}", encodeURIComponent(options.version));
  files.set("/", asset(new TextEncoder().encode(page), "text/html; charset=utf-8"));
  return { get: (path) => files.get(path) };
}

/** The answer for one of the page's files: revalidated each time (an ETag), with the page's security headers. */
export function uiResponse(found: Asset, ifNoneMatch: string | undefined, head: boolean): Response {
  const headers = { ...SECURITY_HEADERS, "content-type": found.type, etag: found.etag, "cache-control": "no-cache" };
  if (ifNoneMatch !== undefined && ifNoneMatch.split(",").some((tag) => tag.trim() === found.etag)) return new Response(null, { status: 304, headers });
  return new Response(head ? null : (found.body as Uint8Array<ArrayBuffer>), { status: 200, headers: { ...headers, "content-length": String(found.body.byteLength) } });
}
