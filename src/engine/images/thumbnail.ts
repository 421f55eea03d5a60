/**
 * Thumbnails of an object's images, for people looking at results (the search page, the interactive
 * page-through). What needs no read of an image (an unknown object, a value it does not hold or no
 * index reads as an image) is answered at once; the reads, downloads and decodes go through the
 * context's FlightQueue (thumbnail-queue.ts): local files and URLs in lanes of their own, at most
 * THUMBNAILS_PER_HOST at once from one host, identical requests sharing one flight, and URLs that
 * failed remembered for FAILED_URL_MS.
 */
import path from "node:path";
import type { EngineContext } from "../context.js";
import { NotFoundError } from "../errors.js";
import { imageValues } from "../indexing/extract.js";
import type { JsonObject } from "../types.js";
import { thumbnailPng } from "./decode.js";
import { defaultFetchOptions, ImageFetcher, MAX_IMAGE_TIMEOUT_MS } from "./fetch.js";
import { bucketImageBase, displayReference, imageBase, resolveImageReference, type ImageReference } from "./reference.js";
import { FlightQueue, RecentFailures } from "./thumbnail-queue.js";

/** How long a thumbnail's image may take to fetch, by default (SEMSEARCH_THUMBNAIL_TIMEOUT, seconds). */
export const DEFAULT_THUMBNAIL_TIMEOUT_MS = 4000;
/** Thumbnails of files made at once, and waiting. */
const FILE_THUMBNAILS = { active: 4, waiting: 256, what: "thumbnails of files" };
/** Thumbnails of URLs made at once (at most THUMBNAILS_PER_HOST from one host), and waiting. */
export const THUMBNAILS_PER_HOST = 4;
const URL_THUMBNAILS = { active: 8, perGroup: THUMBNAILS_PER_HOST, waiting: 256, what: "thumbnails of image URLs" };
/** How long a URL whose thumbnail could not be made is answered IMAGE_UNAVAILABLE without trying it again, and how many are remembered. */
export const FAILED_URL_MS = 60_000;
const FAILED_URLS_KEPT = 1024;

/** The thumbnails' time limit: SEMSEARCH_THUMBNAIL_TIMEOUT (seconds, at most 3,600) when valid, else 4 s. */
export function thumbnailTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.SEMSEARCH_THUMBNAIL_TIMEOUT ?? "";
  const ms = /^\d{1,7}(\.\d{1,3})?$/.test(text) ? Math.round(Number(text) * 1000) : 0;
  return ms > 0 ? Math.min(ms, MAX_IMAGE_TIMEOUT_MS) : DEFAULT_THUMBNAIL_TIMEOUT_MS;
}

interface Thumbnails {
  queue: FlightQueue<Buffer | null>;
  failedUrls: RecentFailures;
}

/** Each engine context's queue and failed URLs (a server has one context for its life). */
const perContext = new WeakMap<EngineContext, Thumbnails>();

function thumbnailsOf(ctx: EngineContext): Thumbnails {
  let found = perContext.get(ctx);
  if (!found) {
    found = { queue: new FlightQueue({ file: FILE_THUMBNAILS, url: URL_THUMBNAILS }), failedUrls: new RecentFailures(FAILED_URL_MS, FAILED_URLS_KEPT) };
    perContext.set(ctx, found);
  }
  return found;
}

/** A URL's host (its lane's group), or the URL itself when it has none Node can read. */
function hostOf(url: string): string {
  return URL.canParse(url) ? new URL(url).host : url;
}

/** Whether `value` is one of the strings of `object` (its fields, their lists and nested objects). */
export function holdsString(object: unknown, value: string, depth = 0): boolean {
  if (typeof object === "string") return object === value;
  if (object === null || typeof object !== "object" || depth > 32) return false;
  return (Array.isArray(object) ? object : Object.values(object)).some((item) => holdsString(item, value, depth + 1));
}

/**
 * Whether `identifier` is an image that one of the project's image indexes reads in `object` (what
 * a search gives as `media_identifier`). Any other value of the object (a path in a note, a URL in
 * a text field) is never read nor fetched for a thumbnail, as indexing never reads it either.
 */
async function isIndexedImage(ctx: EngineContext, object: JsonObject, identifier: string): Promise<boolean> {
  const indexes = await ctx.project.indexes();
  return indexes.some((index) => imageValues(object, index.configuration).some((image) => image.value === identifier));
}

/**
 * A PNG thumbnail (at most `size` px a side) of an image of a stored object, read the way the worker
 * read it (relative paths against the object's directory, HTTP through the project's cache); null
 * when the image cannot be had now. `identifier` must be an image an image index reads in the object
 * (a search's `media_identifier`): a caller cannot name any other file or URL for the server to read.
 * Once `signal` aborts (the client has gone), CancelledError; RequestRefusedError 503 BUSY when the
 * image's lane has 256 thumbnails waiting.
 */
export async function objectThumbnail(ctx: EngineContext, objectId: string, identifier: string, size = 256, signal?: AbortSignal): Promise<Buffer | null> {
  const store = await ctx.store();
  const row = (await store.getObjects([objectId])).get(objectId);
  if (!row) throw new NotFoundError("OBJECT_NOT_FOUND", `Object "${objectId}" not found`);
  const object = JSON.parse(row.body) as JsonObject;
  if (!holdsString(object, identifier)) throw new NotFoundError("IMAGE_NOT_FOUND", `Object "${objectId}" has no image "${displayReference(identifier)}"`, { hint: "Thumbnails are of the images an object names (a search's media_identifier)." });
  // A value of the object that no image index reads as an image (a caption, a path in a note, a URL
  // in a text field) is no image to show: never read, never fetched.
  if (!(await isIndexedImage(ctx, object, identifier))) return null;
  const ref = resolveImageReference(identifier, ctx.project.remote ? bucketImageBase() : imageBase(row.base, ctx.project.localDir));
  if ("error" in ref) return null;
  const thumbnails = thumbnailsOf(ctx);
  if (ref.kind === "http" && thumbnails.failedUrls.has(ref.url)) return null;
  // (the same file read with and without --image-root's confinement is two keys)
  const key = JSON.stringify([ref.kind, ref.kind === "http" ? ref.url : ref.path, ref.kind === "file" ? (ref.root ?? null) : null, size]);
  const lane = ref.kind === "http" ? { lane: "url", group: hostOf(ref.url) } : { lane: "file" };
  return thumbnails.queue.run(key, { ...lane, ...(signal ? { signal } : {}) }, (aborted) => makeThumbnail(ctx, ref, size, aborted, thumbnails.failedUrls));
}

/** Reads or downloads an image and makes its thumbnail; a URL that gives none is remembered (unless the work was abandoned). */
async function makeThumbnail(ctx: EngineContext, ref: ImageReference, size: number, signal: AbortSignal, failedUrls: RecentFailures): Promise<Buffer | null> {
  const url = ref.kind === "http" ? ref.url : null;
  // (it failed while this one waited its turn)
  if (url !== null && failedUrls.has(url)) return null;
  // A person is waiting: no retries, and a few seconds at most.
  const timeout = thumbnailTimeoutMs();
  const fetcher = new ImageFetcher({ ...defaultFetchOptions(path.join(ctx.project.localDir, "cache", "images")), retries: 0, connectTimeoutMs: timeout, timeoutMs: timeout });
  const png = await fetcher
    .fetch(ref, signal)
    .then((fetched) => (fetched.ok ? thumbnailPng(fetched.bytes, size) : null))
    .catch(() => null)
    .finally(() => fetcher.close());
  if (png === null && url !== null && !signal.aborted) failedUrls.add(url);
  return png;
}
