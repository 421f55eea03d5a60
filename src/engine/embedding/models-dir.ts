/** Where models are kept (downloads, and the bundled model compiled for onnxruntime). No dependencies: embedding threads load it. */
import { homedir } from "node:os";
import path from "node:path";

/** The models cache directory. */
export function modelsDir(): string {
  const configured = process.env.SEMSEARCH_MODELS;
  if (configured) return path.resolve(configured);
  const home = homedir();
  if (process.platform === "darwin") return path.join(home, "Library", "Caches", "semsearch", "models");
  if (process.platform === "win32") return path.join(process.env.LOCALAPPDATA ?? path.join(home, "AppData", "Local"), "semsearch", "models");
  return path.join(process.env.XDG_CACHE_HOME || path.join(home, ".cache"), "semsearch", "models");
}
