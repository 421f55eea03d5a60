/**
 * The bundled model's compiled copy in the models folder (`compiled/`): where it lives, reading it
 * without ever blocking on what is not a regular file, and sweeping the temporary files of processes
 * that died while writing one. Every failure here only costs time: the model is converted again.
 */
import { createHash } from "node:crypto";
import { readdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import { readRegularFile } from "../read-file.js";
import { abandonedTemporary } from "../temporary-files.js";
import { modelsDir } from "./models-dir.js";

/** Far above the bundled model's 28 MB: a file this large is not a compiled copy. */
const MAX_COMPILED_BYTES = 256 * 1024 * 1024;

/**
 * The file for a model compiled from `sources` (files whose sizes and times are part of its name,
 * with `versions`: a runtime or converter change names another file, so a stale copy is never read).
 */
export async function compiledFile(name: string, sources: readonly string[], versions: readonly unknown[]): Promise<string> {
  const facts = await Promise.all(
    sources.map(async (source) => {
      const info = await stat(source);
      return `${path.basename(source)}:${info.size}:${info.mtimeMs}`;
    }),
  );
  const key = createHash("sha256").update(JSON.stringify([facts, versions])).digest("hex").slice(0, 16);
  return path.join(modelsDir(), "compiled", `${name}-${key}.ort`);
}

/**
 * The compiled copy's bytes, or null when there is none to use. Something else in its place (a
 * directory, a FIFO, a device) is removed so that a compiled copy can be written there.
 */
export async function readCompiled(file: string): Promise<Buffer | null> {
  try {
    const read = await readRegularFile(file, MAX_COMPILED_BYTES);
    if ("bytes" in read) return read.bytes;
    await rm(file, { recursive: true, force: true });
  } catch {
    // missing or unreadable: converted again
  }
  return null;
}

/** Removes the temporary files of processes no longer running (killed while writing a compiled copy). */
export async function sweepTemporaries(file: string): Promise<void> {
  const dir = path.dirname(file);
  const names = await readdir(dir).catch(() => [] as string[]);
  await Promise.all(
    names.map(async (name) => {
      if (abandonedTemporary(name)) await rm(path.join(dir, name), { force: true }).catch(() => {});
    }),
  );
}
