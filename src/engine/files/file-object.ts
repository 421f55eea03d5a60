/**
 * A found file's objects (issue 29). A document (Markdown, text, HTML, PDF) is one object stored
 * under its path: `{title, body, …front matter, path, ext, size, modified, hash}`. An image is one
 * object of the file fields alone: its `path` is the image reference an image index reads (relative
 * to the folder above the one added, which is the base stored with it). JSON, JSON Lines, CSV and TSV files hold
 * their own objects, read as `objects add file.json` reads them, each given the file fields it does
 * not have itself (a field of the object's own is never overwritten). `hash` is the SHA-256 of the
 * file's bytes: an add skips a file whose stored objects carry the same hash.
 *
 * A file that cannot be read as its format throws UnreadableFile, with the reason listed among the
 * skipped files; the caller adds the others.
 */
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { ValidationError } from "../errors.js";
import { setOwn } from "../fields.js";
import type { JsonObject } from "../types.js";
import { readObjects } from "../objects/input.js";
import { objectId, type ParsedObject } from "../objects/parse.js";
import { decodeText } from "./decode.js";
import { UnreadableFile, type FileDocument } from "./document.js";
import { extensionOf, type FileKind } from "./kinds.js";
import { readDocument } from "./read-document.js";
import type { FoundFile } from "./walk.js";
import { systemReason } from "./walk.js";

/** The fields every file-derived object has. */
export const FILE_FIELDS = ["path", "ext", "size", "modified", "hash"] as const;

export interface FileObjects {
  hash: string;
  objects: ParsedObject[];
}

/** The SHA-256 of a file's bytes, in hex. */
export function contentHash(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * Reads a file's bytes; null when it no longer exists (deleted since the walk found it: it is gone,
 * not unreadable); UnreadableFile when it cannot be read (no permission, no longer a regular file:
 * one replaced by a pipe after the walk is opened without waiting for a writer, and not read).
 */
export async function fileBytes(found: FoundFile): Promise<Buffer | null> {
  let handle: FileHandle;
  try {
    handle = await open(found.file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null; // (ENOTDIR: a folder on its way became a file)
    throw new UnreadableFile(`cannot be read: ${systemReason(error)}`, "unreadable");
  }
  try {
    if (!(await handle.stat()).isFile()) throw new UnreadableFile("not a regular file (a pipe, socket or device)", "unreadable");
    return await handle.readFile();
  } catch (error) {
    if (error instanceof UnreadableFile) throw error;
    throw new UnreadableFile(`cannot be read: ${systemReason(error)}`, "unreadable");
  } finally {
    await handle.close();
  }
}

/** How a document is read: in this thread (readDocument), or by a ReadPool's threads. */
export type DocumentReader = (kind: FileKind, bytes: Uint8Array, name: string) => Promise<FileDocument>;

/** The objects of a found file whose bytes are `bytes` (and whose SHA-256 is `hash`, when the caller has it already). */
export async function fileObjects(found: FoundFile, bytes: Buffer, read: DocumentReader = readDocument, hash = contentHash(bytes)): Promise<FileObjects> {
  const fields: JsonObject = { path: found.path, ext: extensionOf(found.path), size: bytes.length, modified: found.modified.toISOString(), hash };
  const where = found.path;
  if (found.kind === "image") return { hash, objects: [own(found.path, fields)] };
  if (found.kind === "json" || found.kind === "jsonl" || found.kind === "csv" || found.kind === "tsv") {
    const text = decodeText(bytes);
    const format = found.kind === "csv" || found.kind === "tsv" ? found.kind : "json";
    const objects: ParsedObject[] = [];
    try {
      for await (const parsed of readObjects({ source: where, text, format })) {
        for (const [name, value] of Object.entries(fields)) if (!Object.hasOwn(parsed.object, name)) setOwn(parsed.object, name, value);
        objects.push(parsed);
      }
    } catch (error) {
      if (error instanceof ValidationError) throw new UnreadableFile(error.message.startsWith(`${where}`) ? error.message.slice(where.length).replace(/^[:\s]+/, "") : error.message);
      throw error;
    }
    return { hash, objects };
  }
  const document = await read(found.kind, bytes, found.path.slice(found.path.lastIndexOf("/") + 1));
  const object: JsonObject = {};
  if (document.title !== undefined && document.title !== "") object.title = document.title;
  object.body = document.body;
  for (const [name, value] of Object.entries(document.fields ?? {})) {
    if (!Object.hasOwn(object, name) && !Object.hasOwn(fields, name)) setOwn(object, name, value);
  }
  Object.assign(object, fields);
  return { hash, objects: [own(found.path, object)] };
}

/** An object stored under the file's path, once the path is checked as an id. */
function own(id: string, object: JsonObject): ParsedObject {
  try {
    objectId({ id }, "id", id);
  } catch (error) {
    throw new UnreadableFile(`its path cannot be an id: ${(error as Error).message.replace(/^.*?field "id" /, "")}`, "id");
  }
  return { object, where: id, id };
}
