/** Thumbnails of an object's images, for people looking at results (the interactive page-through). */
import path from "node:path";
import type { EngineContext } from "../context.js";
import { NotFoundError } from "../errors.js";
import { imageValues } from "../indexing/extract.js";
import type { JsonObject } from "../types.js";
import { thumbnailPng } from "./decode.js";
import { defaultFetchOptions, ImageFetcher } from "./fetch.js";
import { bucketImageBase, displayReference, imageBase, resolveImageReference } from "./reference.js";

/** How long a thumbnail's image may take to fetch. */
const THUMBNAIL_TIMEOUT_MS = 4000;

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
 */
export async function objectThumbnail(ctx: EngineContext, objectId: string, identifier: string, size = 256): Promise<Buffer | null> {
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
  // A person is waiting: no retries, and a few seconds at most.
  const fetcher = new ImageFetcher({ ...defaultFetchOptions(path.join(ctx.project.localDir, "cache", "images")), retries: 0, connectTimeoutMs: THUMBNAIL_TIMEOUT_MS, timeoutMs: THUMBNAIL_TIMEOUT_MS });
  try {
    const fetched = await fetcher.fetch(ref);
    return fetched.ok ? await thumbnailPng(fetched.bytes, size) : null;
  } catch {
    return null;
  } finally {
    fetcher.close();
  }
}
