/**
 * API keys of `semsearch serve`. A key is `ssk_<id>_<secret>`: the id finds its record, the secret
 * (32 random bytes) proves it. Only an HMAC-SHA256 digest of the whole key is stored, keyed with a
 * random project secret, and compared in constant time: the keys file does not hold the keys, and
 * a copy of it cannot be used to call the server. Keys are printed once, when created.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { statSync } from "node:fs";
import * as v from "valibot";
import { fsError, NotFoundError, ValidationError } from "./errors.js";
import type { Project } from "./project.js";
import { damaged, readState, type StateRead } from "./state-files.js";

/** A key as listed: never the key itself. */
export interface KeyInfo {
  /** `key_<12 letters and digits>`; also the second part of the key. */
  id: string;
  name?: string;
  /** Read-only keys search and read; the others also write. */
  read_only: boolean;
  created_at: string;
  /** Set when revoked: the key no longer works. */
  revoked_at?: string;
}

/** A key as checked by the server. */
export interface Caller {
  keyId: string;
  readOnly: boolean;
}

const KeyRecordSchema = v.object({
  id: v.pipe(v.string(), v.regex(/^key_[0-9a-z]{12}$/)),
  name: v.optional(v.string()),
  read_only: v.boolean(),
  created_at: v.string(),
  revoked_at: v.optional(v.string()),
  digest: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)),
});
const KeysFileSchema = v.object({ version: v.literal(1), secret: v.pipe(v.string(), v.minLength(32)), keys: v.array(KeyRecordSchema) });
type KeysFile = v.InferOutput<typeof KeysFileSchema>;

const KEY_SHAPE = /^ssk_(key_[0-9a-z]{12})_([A-Za-z0-9_-]{43})$/;
const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";
const MAX_NAME = 200;

const KEYS = "keys.json";

function keysFile(project: Project): string {
  return project.documentWhere(KEYS);
}

function digest(secret: string, key: string): Buffer {
  return createHmac("sha256", secret).update(key).digest();
}

function info(record: KeysFile["keys"][number]): KeyInfo {
  const { digest: _digest, ...rest } = record;
  return rest;
}

const KEYS_HINT = "Move it away and create new keys with `semsearch keys create`: every key it held stops working.";

/** The keys as stored; none yet when there are none. A damaged keys document is an EnvironmentError. */
async function readKeys(project: Project): Promise<KeysFile> {
  return project.remote ? keysFrom(await project.readDocument(KEYS, KeysFileSchema), keysFile(project)) : readKeysFileNow(project);
}

/** A local project's keys file, read now (a server checks it at each request). */
function readKeysFileNow(project: Project): KeysFile {
  const file = keysFile(project);
  // A FIFO or device would block the read (and a server with it): only a regular file is read.
  const kind = fileKind(file);
  if (kind !== "file" && kind !== "missing") throw damaged(file, "it is not a regular file", KEYS_HINT);
  return keysFrom(kind === "file" ? readState(file, KeysFileSchema) : null, file);
}

function keysFrom(read: StateRead<KeysFile> | null, file: string): KeysFile {
  if (read === null || (!read.ok && read.missing)) return { version: 1, secret: randomBytes(32).toString("base64url"), keys: [] };
  if (read.ok) return read.value;
  // JSON.parse's message quotes the file's text: not in logs, whatever the file holds.
  throw damaged(file, read.reason.startsWith("not valid JSON") ? "not valid JSON" : read.reason, KEYS_HINT);
}

function fileKind(file: string): "missing" | "file" | "other" {
  try {
    return statSync(file).isFile() ? "file" : "other";
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw fsError(error, "read", file);
  }
}

async function saveKeys(project: Project, keys: KeysFile): Promise<void> {
  await project.writeDocument(KEYS, keys, 0o600);
}

export interface CreateKeyOptions {
  name?: string;
  readOnly?: boolean;
}

/** Creates a key; the only time the key itself is returned. */
export async function createKey(project: Project, options: CreateKeyOptions, now: Date): Promise<KeyInfo & { key: string }> {
  const name = options.name;
  if (name !== undefined && (name.trim() === "" || name.length > MAX_NAME || /[\u0000-\u001f\u007f]/.test(name))) {
    throw new ValidationError("INVALID_KEY_NAME", `A key name is 1–${MAX_NAME} characters without control characters, got ${JSON.stringify(name.slice(0, 50))}`);
  }
  return project.locked(async () => {
    const keys = await readKeys(project);
    let id = "key_";
    for (const byte of randomBytes(12)) id += ALPHABET[byte % ALPHABET.length];
    const key = `ssk_${id}_${randomBytes(32).toString("base64url")}`;
    const record = { id, ...(name !== undefined ? { name } : {}), read_only: options.readOnly === true, created_at: now.toISOString(), digest: digest(keys.secret, key).toString("hex") };
    await saveKeys(project, { ...keys, keys: [...keys.keys, record] });
    return { ...info(record), key };
  });
}

export async function listKeys(project: Project): Promise<KeyInfo[]> {
  return (await readKeys(project)).keys.map(info);
}

/** Revokes a key by id (or by its name when one key has it); resolves to the revoked key. */
export async function revokeKey(project: Project, idOrName: string, now: Date): Promise<KeyInfo> {
  return project.locked(async () => {
    const keys = await readKeys(project);
    const matches = keys.keys.filter((record) => record.id === idOrName || (record.name === idOrName && !record.revoked_at));
    const byId = matches.find((record) => record.id === idOrName);
    if (!byId && matches.length > 1) throw new ValidationError("AMBIGUOUS_KEY_NAME", `${matches.length} keys are named ${JSON.stringify(idOrName)}: revoke one by its id (semsearch keys list)`);
    const target = byId ?? matches[0];
    if (!target) throw new NotFoundError("KEY_NOT_FOUND", `No key ${JSON.stringify(idOrName.slice(0, 100))}`, { hint: "semsearch keys list shows the keys." });
    const revoked = { ...target, revoked_at: target.revoked_at ?? now.toISOString() };
    await saveKeys(project, { ...keys, keys: keys.keys.map((record) => (record === target ? revoked : record)) });
    return info(revoked);
  });
}

/** How often a server of a bucket project reads its keys again (a key created or revoked elsewhere works, or stops, within this). */
export const REMOTE_KEYS_REFRESH_MS = 1_000;

/**
 * Checks keys for a long-running server. A local project's keys file is read again whenever it
 * changes (so a key created or revoked by the CLI takes effect at the next request), and not
 * otherwise; a bucket project's keys are read again every REMOTE_KEYS_REFRESH_MS in the background
 * (a request never waits for the store). Open with `KeyChecker.open`.
 */
export class KeyChecker {
  private cached: { stamp: string; keys: KeysFile } | null = null;
  private timer: NodeJS.Timeout | undefined;

  private constructor(private readonly project: Project) {}

  static async open(project: Project): Promise<KeyChecker> {
    const checker = new KeyChecker(project);
    checker.cached = { stamp: project.remote ? "record" : checker.stamp(), keys: await readKeys(project) };
    if (project.remote) {
      let reading = false;
      checker.timer = setInterval(() => {
        if (reading) return;
        reading = true;
        readKeys(project)
          .then((keys) => {
            checker.cached = { stamp: "record", keys };
          })
          // (a store out of reach for a moment: the keys last read stay in force)
          .catch(() => {})
          .finally(() => {
            reading = false;
          });
      }, REMOTE_KEYS_REFRESH_MS);
      checker.timer.unref();
    }
    return checker;
  }

  close(): void {
    clearInterval(this.timer);
  }

  /** Whether any key that works exists. */
  hasKeys(): boolean {
    return this.current().keys.some((record) => !record.revoked_at);
  }

  /** The caller a key belongs to; null for a key that is malformed, unknown or revoked. */
  check(key: string): Caller | null {
    const match = KEY_SHAPE.exec(key);
    if (!match) return null;
    const keys = this.current();
    const record = keys.keys.find((candidate) => candidate.id === match[1]);
    if (!record || record.revoked_at) return null;
    const expected = Buffer.from(record.digest, "hex");
    return timingSafeEqual(digest(keys.secret, key), expected) ? { keyId: record.id, readOnly: record.read_only } : null;
  }

  private stamp(): string {
    try {
      const stat = statSync(keysFile(this.project));
      return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    } catch {
      return "missing"; // no keys file: no keys
    }
  }

  private current(): KeysFile {
    const cached = this.cached as { stamp: string; keys: KeysFile };
    if (this.project.remote) return cached.keys;
    const stamp = this.stamp();
    if (cached.stamp !== stamp) this.cached = { stamp, keys: readKeysFileNow(this.project) };
    return (this.cached as { keys: KeysFile }).keys;
  }
}
