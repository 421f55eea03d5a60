/**
 * Where a project lives, read from `--project` (or SEMSEARCH_PROJECT): a local directory, or a
 * bucket and prefix of an object store (`s3://bucket/prefix`, `gs://…`, `az://…`). Pure: no file
 * system, no network.
 *
 * LanceDB reads a path as a URI: a local path holding a control character would be percent-encoded
 * and the data written elsewhere, and `s3:/bucket` (one slash) or `S3://` read as a path made a local
 * folder named `s3:`. Both are refused here rather than guessed at.
 */
import { UsageError } from "./errors.js";
import { replacedCharacterAt } from "./replaced-text.js";

export type RemoteScheme = "s3" | "gs" | "az";

export type ProjectLocation =
  | { kind: "local"; dir: string }
  | {
      kind: "remote";
      scheme: RemoteScheme;
      bucket: string;
      /** The key prefix inside the bucket, without leading or trailing slashes ("" for the bucket's root). */
      prefix: string;
      /** The normalised form: `<scheme>://<bucket>[/<prefix>]`. */
      uri: string;
    };

const REMOTE_SCHEMES: readonly RemoteScheme[] = ["s3", "gs", "az"];
/** Schemes a user may mean (object stores and URL forms): with one slash, or in capitals, they are typos, not folder names. */
const URL_LIKE = /^(s3|s3a|gs|gcs|az|abfs|abfss|file|https?|memory):\/*/i;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** A scheme and `://`, as a URI has them. */
const ADDRESS = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(.*)$/s;
/** Spaces and invisible characters (zero-width spaces, a byte order mark, direction marks) that a copied value may carry at either end. */
const AROUND = /^[\s\p{Cf}]+|[\s\p{Cf}]+$/gu;
/**
 * What text read as UTF-8 becomes where its bytes were not UTF-8 (U+FFFD, as Node reads argv and the
 * environment), and halves of characters (lone surrogates): the folder written would not be the one named.
 */
const notUtf8 = (given: string) => replacedCharacterAt(given) !== -1;

/** The value quoted for a message, with what cannot be seen (invisible characters, spaces other than the plain one) escaped. */
function shown(given: string): string {
  return JSON.stringify(given).replace(/[\p{Cf}\p{Z}\uFFFD]/gu, (c) => (c === " " ? c : `\\u${(c.codePointAt(0) as number).toString(16).padStart(4, "0")}`));
}

function invalid(given: string, why: string, hint: string): UsageError {
  return new UsageError("INVALID_PROJECT", `The project ${shown(given)} ${why}`, { hint });
}

/**
 * Bucket names as the three stores allow them, the strictest common rule for each: S3 3–63
 * lowercase letters, digits, dots and hyphens (not like an IP address, no `..`); Cloud Storage the
 * same plus underscores; Azure containers 3–63 lowercase letters, digits and single hyphens.
 */
function bucketProblem(scheme: RemoteScheme, bucket: string): string | null {
  if (bucket.length < 3 || bucket.length > 63) return `is ${bucket.length} characters long (3 to 63)`;
  const allowed = scheme === "s3" ? /^[a-z0-9][a-z0-9.-]*[a-z0-9]$/ : scheme === "gs" ? /^[a-z0-9][a-z0-9._-]*[a-z0-9]$/ : /^[a-z0-9](?:-?[a-z0-9])*$/;
  if (!allowed.test(bucket)) {
    return scheme === "az"
      ? "may hold only lowercase letters, digits and single hyphens, starting and ending with a letter or digit"
      : `may hold only lowercase letters, digits, dots${scheme === "gs" ? ", underscores" : ""} and hyphens, starting and ending with a letter or digit`;
  }
  if (bucket.includes("..")) return "holds two dots in a row";
  if (/^\d+\.\d+\.\d+\.\d+$/.test(bucket)) return "is written like an IP address";
  return null;
}

/**
 * The prefix's problem, or null. A prefix is keys' common start: segments of printable characters
 * other than `?`, `#`, `%` and `\` (which a URI would read as a query, a fragment, an escape or a
 * separator), none empty, `.` or `..` (which a store keeps as they are but a path would not).
 */
function prefixProblem(prefix: string): string | null {
  if (/[?#%\\\s]/u.test(prefix)) return "holds a character a URI would not keep as it is (?, #, %, \\ or a space)";
  if (/\p{Cf}/u.test(prefix)) return "holds an invisible character (a zero-width space or a direction mark, say)";
  const segments = prefix.split("/");
  if (segments.some((segment) => segment === "")) return "holds an empty part (two slashes in a row)";
  if (segments.some((segment) => segment === "." || segment === "..")) return 'holds a "." or ".." part';
  // (another project's table: its files would be mixed with LanceDB's, whose cleanup removes files it does not know)
  if (segments.some((segment) => segment.endsWith(".lance"))) return "lies inside a LanceDB table (a part ending in .lance)";
  // (in UTF-8 bytes: a store limits a key's bytes, and the project's own keys follow the prefix)
  const bytes = new TextEncoder().encode(prefix).length;
  if (bytes > 512) return `is ${bytes} bytes long in UTF-8 (at most 512)`;
  return null;
}

/**
 * An address written with something a user cannot see or tell apart: spaces or invisible characters
 * around it (copied from a page or a file), look-alike letters (full-width `ｓ3：//`, Cyrillic `ѕ3://`).
 * Read as a path, each made a local folder named after the address. `./` before a path keeps it local.
 */
function addressNearMiss(given: string): UsageError | null {
  const looksLike = (text: string) => ADDRESS.test(text) || URL_LIKE.test(text);
  const core = given.replace(AROUND, "");
  if (core !== given && looksLike(core)) {
    return invalid(given, "holds spaces or invisible characters around an address", `Write it without them: ${core}.`);
  }
  const folded = core.normalize("NFKC");
  if (folded !== core && looksLike(folded)) {
    return invalid(given, "writes an address in look-alike characters (full-width letters, say)", `Type it in plain characters: ${folded}.`);
  }
  if (/^[^/\\]+:\/\//.test(core) && !ADDRESS.test(core)) {
    return invalid(given, "looks like an address, but its scheme is not written in plain letters", "Type the scheme in plain letters (s3://, gs://, az://), or write ./ before a local folder's name.");
  }
  return null;
}

/** Reads a `--project` value. Throws UsageError (exit 2) naming what is wrong. */
export function parseProjectLocation(given: string): ProjectLocation {
  if (given.trim() === "") throw new UsageError("EMPTY_PROJECT", "The project directory is empty");
  if (CONTROL.test(given)) {
    throw new UsageError("INVALID_PROJECT", `The project path ${JSON.stringify(given)} holds a control character (a newline, say)`, {
      hint: "Use a project path without control characters.",
    });
  }
  if (notUtf8(given)) {
    throw invalid(given, "holds U+FFFD or half of a character: bytes that are not UTF-8 were replaced, and the folder written would not be the one named", "Name the project with a path in UTF-8 (rename the folder, or use a symbolic link with a UTF-8 name).");
  }
  const nearMiss = addressNearMiss(given);
  if (nearMiss) throw nearMiss;
  const url = ADDRESS.exec(given);
  if (!url) {
    const like = URL_LIKE.exec(given);
    if (like && like[1] !== undefined) {
      const scheme = like[1].toLowerCase();
      throw invalid(given, `looks like a ${scheme}:// address but is not one`, `Write it as ${scheme}://${given.slice(like[0].length)} (two slashes), or ./${given} for a local folder of that name.`);
    }
    return { kind: "local", dir: given };
  }
  const scheme = (url[1] as string).toLowerCase();
  const rest = url[2] as string;
  if (scheme !== url[1]) throw invalid(given, `writes its scheme in capitals (${url[1]}://)`, `Write it as ${scheme}://${rest}.`);
  if (scheme === "file") {
    if (!rest.startsWith("/")) throw invalid(given, "is a file:// address without an absolute path", "Write file:///absolute/path, or give the path itself.");
    if (/[?#%]/.test(rest)) throw invalid(given, "is a file:// address holding ?, # or %", "Give the path itself instead of a file:// address.");
    return { kind: "local", dir: rest };
  }
  if (!(REMOTE_SCHEMES as readonly string[]).includes(scheme)) {
    throw invalid(given, `uses ${scheme}://, which semsearch cannot store a project on`, "A project is a local directory, or a bucket: s3://bucket/prefix, gs://bucket/prefix or az://container/prefix.");
  }
  const remote = scheme as RemoteScheme;
  const slash = rest.indexOf("/");
  const authority = slash === -1 ? rest : rest.slice(0, slash);
  const prefix = (slash === -1 ? "" : rest.slice(slash + 1)).replace(/\/+$/, "");
  if (authority.includes("@") || authority.includes(":")) {
    throw invalid(given, "holds credentials or a port in its address", "Give the bucket only; credentials and the endpoint come from the environment (AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL, …).");
  }
  if (authority === "") throw invalid(given, "names no bucket", `Write ${remote}://bucket/prefix.`);
  const badBucket = bucketProblem(remote, authority);
  if (badBucket) throw invalid(given, `names a bucket that ${badBucket}`, `Check the bucket's name: ${remote}://bucket/prefix.`);
  const badPrefix = prefix === "" ? null : prefixProblem(prefix);
  if (badPrefix) throw invalid(given, `has a prefix that ${badPrefix}`, "Write the prefix as parts joined by single slashes, without ?, #, %, \\ or spaces.");
  return { kind: "remote", scheme: remote, bucket: authority, prefix, uri: `${remote}://${authority}${prefix === "" ? "" : `/${prefix}`}` };
}

/** Whether a project named as Project takes it (projectAddress) is a bucket's address rather than a local directory. */
export function isBucketAddress(address: string): boolean {
  return /^[a-z0-9]+:\/\//.test(address);
}

/**
 * What a `--project` value names, as Project takes it: a local directory as given, or a bucket
 * project's normalised address (`s3://bucket/prefix`). Cloud Storage and Azure are refused
 * (UsageError REMOTE_PROJECT_UNSUPPORTED, exit 2) before anything is read or written: LanceDB can
 * store tables there, but semsearch's state store (its leases and records) is written for S3 only.
 */
export function projectAddress(given: string): string {
  // A store semsearch cannot use is said to be so rather than what else is wrong with its address
  // (its bucket's name, say); control characters and bytes that are not UTF-8 are still refused first.
  const unsupported = /^(gs|az):\/\//.exec(given)?.[1];
  let location: ProjectLocation | null;
  try {
    location = parseProjectLocation(given);
  } catch (error) {
    if (!(unsupported && error instanceof UsageError && error.code === "INVALID_PROJECT" && !CONTROL.test(given) && !notUtf8(given))) throw error;
    location = null;
  }
  if (location?.kind === "local") return location.dir;
  if (location === null || location.scheme !== "s3") {
    const scheme = location?.scheme ?? unsupported;
    throw new UsageError("REMOTE_PROJECT_UNSUPPORTED", `The project ${location?.uri ?? shown(given)} is on ${scheme === "gs" ? "Google Cloud Storage" : "Azure Blob Storage"}, which semsearch cannot keep a project on yet (S3 only)`, {
      // Versions before this one read the address as a relative path: a user of one has a project there.
      hint: `Use an S3 bucket (s3://bucket/prefix; S3-compatible servers through AWS_ENDPOINT_URL) or a local directory; nothing was written. Versions before this one read this address as a folder: a project they made is at ./${given.replace(/\/{2,}/g, "/").replace(/\/$/, "")} (relative to where they ran), which --project takes as it is.`,
    });
  }
  return location.uri;
}
