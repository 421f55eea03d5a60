/**
 * Image references: the values of an image field that name a picture to fetch — an http(s) URL, a
 * `file://` URL or a file path. Pure: parses and resolves strings only; nothing is read or fetched
 * here (fetch.ts does that).
 */
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Where an image is: an http(s) URL (normalised by `new URL`) or an absolute file path; `root`: the
 * file must be inside that folder once symbolic links are resolved (objects added over HTTP).
 */
export type ImageReference = { kind: "http"; url: string } | { kind: "file"; path: string; root?: string };

/** File extensions taken for images, lower case without the dot (compared case-insensitively). */
export const IMAGE_EXTENSIONS: readonly string[] = ["jpg", "jpeg", "png", "webp", "gif", "avif", "tif", "tiff"];

/** Longer values are never references (a path or URL that long is a mistake or an attack). */
export const MAX_REFERENCE_LENGTH = 4096;

/** Values that are shown cut to this many characters. */
const DISPLAY_LENGTH = 200;

const SCHEME = /^([a-z][a-z0-9+.-]+):/i;
// Line breaks, tabs, NUL and every other C0/C1 control character, and DEL.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const CONTROL_ALL = /[\u0000-\u001f\u007f-\u009f]/g;
const EXTENSION = new RegExp(`[^/\\\\.][^/\\\\]*\\.(?:${IMAGE_EXTENSIONS.join("|")})$`, "i");

/** Why a value cannot be a reference at all, or null when its form is acceptable. */
function formProblem(value: string): string | null {
  if (value.length === 0) return "empty reference";
  if (value.length > MAX_REFERENCE_LENGTH) return `longer than ${MAX_REFERENCE_LENGTH} characters`;
  if (CONTROL.test(value)) return "contains a line break or control character";
  if (value.trim() !== value) return "starts or ends with white space";
  return null;
}

/**
 * Whether a value looks like an image reference, so that an image index can treat it as one:
 *
 * - an `http://` or `https://` URL (any path: the content decides later) or a `file://` URL, with
 *   no white space anywhere in it;
 * - otherwise a path (absolute, `./…`, `../…` or bare relative like `photos/a.jpg`) whose last
 *   segment ends with an image extension (IMAGE_EXTENSIONS, any case) after a non-empty name.
 *   A path may contain spaces (`My Photos/cat 1.png`), but since the value must end with the
 *   extension, prose such as `I like cats.jpg and dogs` is not one.
 *
 * Never: an empty value, one longer than MAX_REFERENCE_LENGTH, one with a line break, NUL or other
 * control character, one starting or ending with white space, or one with another scheme
 * (`javascript:`, `data:`, `ftp:`; a single letter like `C:` counts as a drive, not a scheme).
 */
export function looksLikeImageReference(value: string): boolean {
  if (typeof value !== "string" || formProblem(value) !== null) return false;
  const scheme = SCHEME.exec(value)?.[1]?.toLowerCase();
  if (scheme !== undefined) {
    const isUrl = (scheme === "http" || scheme === "https" || scheme === "file") && value.slice(scheme.length + 1).startsWith("//");
    return isUrl && !/\s/.test(value);
  }
  return EXTENSION.test(value);
}

/**
 * Where a reference points. http(s) URLs are checked with `new URL` and kept (credentials too: use
 * displayReference to show one); `file://` URLs become paths (a host other than `localhost` is
 * refused); any other value is a path, resolved against `baseDir` (absolute; `~` is not expanded,
 * so `~/a.png` is a folder named `~` in `baseDir`). Returns a short reason when the value cannot
 * be a reference.
 */
export function resolveImageReference(value: string, baseDir: string): ImageReference | { error: string } {
  if (baseDir === BUCKET) {
    const resolved = resolveImageReference(value, path.sep);
    return "error" in resolved || resolved.kind !== "file" ? resolved : { error: IN_BUCKET };
  }
  if (baseDir.startsWith(CONFINED)) return confine(resolveImageReference(value, baseDir.slice(CONFINED.length) || path.sep), baseDir.slice(CONFINED.length));
  if (!path.isAbsolute(baseDir)) throw new TypeError(`resolveImageReference: baseDir must be absolute, got "${displayReference(baseDir)}"`);
  const problem = formProblem(value);
  if (problem !== null) return { error: problem };
  const scheme = SCHEME.exec(value)?.[1]?.toLowerCase();
  if (scheme === undefined) return { kind: "file", path: path.resolve(baseDir, value) };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { error: "not a valid URL" };
  }
  if (url.protocol === "http:" || url.protocol === "https:") {
    return url.hostname ? { kind: "http", url: url.href } : { error: "not a valid URL" };
  }
  if (url.protocol === "file:") {
    if (url.hostname !== "" && url.hostname !== "localhost") return { error: `file URL on another host "${displayReference(url.hostname)}"` };
    try {
      return { kind: "file", path: fileURLToPath(url) };
    } catch {
      return { error: "not a valid file URL" };
    }
  }
  return { error: `unsupported URL scheme "${displayReference(url.protocol)}"` };
}

/**
 * The base of objects whose local images are confined (objects added over HTTP): `confined:<root>`
 * lets them name files inside `root` only (relative paths resolve against it), and `confined:`
 * alone no local file at all. URLs are not confined.
 */
const CONFINED = "confined:";
/** The base of every object of a project in a bucket: URLs only (see bucketImageBase). */
const BUCKET = "bucket:";
const IN_BUCKET = "local image files are not read in a project in a bucket (a worker on another machine could not read them): use an http(s) URL";

/**
 * The base of objects of a project in a bucket: their images must be URLs, since the machine that
 * indexes or shows them may not be the one that added them.
 */
export function bucketImageBase(): string {
  return BUCKET;
}

/** The reason of a file outside an object's image root. */
export const OUTSIDE_ROOT = "outside the folder the server reads images from (--image-root)";

/** The recorded base of objects confined to `root` (absolute), or to no local file when null. */
export function confinedBase(root: string | null): string {
  if (root !== null && !path.isAbsolute(root)) throw new TypeError(`confinedBase: root must be absolute, got "${displayReference(root)}"`);
  return CONFINED + (root ?? "");
}

export function isConfinedBase(base: string): boolean {
  return base.startsWith(CONFINED);
}

function confine(resolved: ImageReference | { error: string }, root: string): ImageReference | { error: string } {
  if ("error" in resolved || resolved.kind !== "file") return resolved;
  if (root === "") return { error: "local image files are not read for objects added over HTTP (the server's --image-root allows one folder)" };
  const relative = path.relative(root, resolved.path);
  if (relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) return { error: OUTSIDE_ROOT };
  // The reader resolves symbolic links and checks again: a link inside the root may point outside.
  return { ...resolved, root };
}

/**
 * The directory an object's relative image paths resolve against: the one recorded with it when it
 * was added, else (objects stored before that was recorded) the directory holding the project.
 */
export function imageBase(recorded: string | null | undefined, projectDir: string): string {
  return recorded ?? path.dirname(projectDir);
}

/**
 * A reference as it may be shown to a person: a URL's `user:password@` removed, control characters
 * replaced by `�`, and values longer than 200 characters cut with `…`.
 */
export function displayReference(value: string): string {
  // The user info ends at the last `@` before the path, as in the WHATWG URL parser.
  const bare = value.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, "$1");
  // Cut in code units first (cheap on huge values), then in characters (no split surrogate pairs).
  const chars = Array.from(bare.slice(0, DISPLAY_LENGTH * 2).replace(CONTROL_ALL, "\uFFFD"));
  return chars.length > DISPLAY_LENGTH || bare.length > DISPLAY_LENGTH * 2 ? `${chars.slice(0, DISPLAY_LENGTH - 1).join("")}…` : chars.join("");
}
