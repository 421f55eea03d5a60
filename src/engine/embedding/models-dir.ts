/** Where models are kept (downloads, and the bundled model compiled for onnxruntime). No dependencies: embedding threads load it. */
import { createHash } from "node:crypto";
import { homedir } from "node:os";
import path from "node:path";

/** The models cache directory. */
export function modelsDir(): string {
  const configured = process.env.SEMSEARCH_MODELS;
  if (configured) return path.resolve(configured);
  const home = homedir();
  if (process.platform === "darwin") return path.join(home, "Library", "Caches", "semsearch", "models");
  if (process.platform === "win32") return path.join(process.env.LOCALAPPDATA ?? path.join(home, "AppData", "Local"), "semsearch", "models");
  // (a relative XDG_CACHE_HOME is ignored, as the XDG base directory specification says: it would put
  // models under whatever directory a command runs in)
  const cache = process.env.XDG_CACHE_HOME;
  return path.join(cache && path.isAbsolute(cache) ? cache : path.join(home, ".cache"), "semsearch", "models");
}

/**
 * This machine's folder for a bucket project (`s3://…`): what a local project keeps in its own
 * directory and a bucket should not hold (the background worker's log, fetched images, spooled
 * input), beside the models cache.
 */
export function remoteProjectCacheDir(uri: string): string {
  return path.join(path.dirname(modelsDir()), "projects", createHash("sha256").update(uri).digest("hex").slice(0, 24));
}
