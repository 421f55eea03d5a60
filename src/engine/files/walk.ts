/**
 * Finding the files an `objects add <folder|file>…` reads (issue 29). Folders are walked
 * recursively, honouring `.gitignore` and `.semsearchignore` files inside them (at any depth, each
 * relative to its folder, as git reads them; not those above the folder named, which was asked for
 * even if a repository around it ignores it) and `--glob` / `--exclude` patterns; `node_modules`, the project's
 * own folder and hidden files and folders (`.git`, `.env`, an editor's `.a.md.swp`) are left out. Symbolic links to files are read; links to folders are not
 * followed (a cycle would never end). Every file found gets the path it is stored under (its id):
 * the path from the folder named, prefixed by that folder's name (`notes/sub/a.md` for a file of
 * `./notes`, wherever the command runs), so two folders added to one project keep apart and a file
 * keeps its id when the folder is added from elsewhere. A file named directly is stored under its
 * folder's name and its own (`notes/a.md`), as it would be when its folder is added.
 *
 * What a walk cannot use is skipped with a reason (too large, unreadable, an unknown format) and
 * listed, never failing the others. Ignored files are not listed (a `node_modules` would drown the
 * list): they are only counted.
 */
import { lstat, readdir, readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { NotFoundError, UsageError } from "../errors.js";
import type { SkipKind } from "./document.js";
import { fileKind, type FileKind } from "./kinds.js";
import { projectFolderReason, projectMark, refuseProjectData } from "./project-folder.js";

export interface WalkOptions {
  /** Only files whose stored path matches one of these (picomatch globs, e.g. `**\/*.md`). */
  glob?: readonly string[];
  /** Files and folders whose stored path matches one of these are left out. */
  exclude?: readonly string[];
  /** Further extensions read as plain text (`--ext log`). */
  textExtensions?: readonly string[];
  /** Files larger than this are skipped (bytes). */
  maxFileSize: number;
  /** Folders never entered (the project's own), absolute. */
  skipDirs?: readonly string[];
  /** Called with each folder left out as another semsearch project's (absolute), as it is found (`--watch` stops looking inside it). */
  onProjectFolder?: (dir: string) => void;
  /**
   * Stored paths to look at instead of whole folders (`--watch`'s events): each one under a folder
   * target is walked alone (a folder whole), as the full walk would see it, and is the scope.
   */
  only?: ReadonlySet<string>;
}

export interface FoundFile {
  /** Absolute path on disk. */
  file: string;
  /** The stored path and id: `<folder name>/<path inside it>`, `/`-separated. */
  path: string;
  /** The folder the stored path is relative to (image references are resolved against it). */
  base: string;
  kind: FileKind;
  size: number;
  modified: Date;
}

export interface SkippedFile {
  /** The stored path; a folder's ends with `/`. */
  path: string;
  reason: string;
  kind: SkipKind;
}

export interface WalkResult {
  files: FoundFile[];
  skipped: SkippedFile[];
  /** Files left out by ignore files, `--glob` or `--exclude`. */
  ignored: number;
  /** The stored-path prefixes the walk covered: `notes/` for a folder, the stored path for a file. */
  scopes: string[];
}

/** Folders never walked into, wherever they are. */
const NEVER_ENTERED = new Set([".git", "node_modules", ".semsearch"]);
export const IGNORE_FILES = [".gitignore", ".semsearchignore"];
const NOT_REGULAR = "not a regular file (a pipe, socket or device)";

/**
 * The stored path of a folder given on the command line (its name) or of a file (its folder's name,
 * then its own), and the folder that path is relative to. The file system's root folder has the
 * empty path: its files are stored under their own paths.
 */
export function storedPath(target: string, isFolder: boolean): { base: string; path: string } {
  const absolute = path.resolve(target);
  const base = isFolder ? path.dirname(absolute) : path.dirname(path.dirname(absolute));
  return { base, path: toPosix(path.relative(base, absolute)) };
}

/** `notes` → `notes/`; the root's empty path stays empty. */
function under(stored: string): string {
  return stored === "" ? "" : `${stored}/`;
}

function toPosix(relative: string): string {
  return path.sep === "/" ? relative : relative.split(path.sep).join("/");
}

/** Walks `targets` (folders and files); a target that does not exist or cannot be read is an error for the caller. */
export async function walk(targets: readonly string[], options: WalkOptions): Promise<WalkResult> {
  const picomatch = (await import("picomatch")).default;
  const only = options.glob?.length ? picomatch([...options.glob], { dot: true }) : null;
  const excluded = options.exclude?.length ? picomatch([...options.exclude], { dot: true }) : null;
  const ignoreFactory = (await import("ignore")).default;
  const skipDirs = new Set((options.skipDirs ?? []).map((dir) => path.resolve(dir)));
  const result: WalkResult = { files: [], skipped: [], ignored: 0, scopes: [] };
  const seen = new Set<string>();

  const consider = async (file: string, stored: string, base: string, info: { size: number; mtime: Date }) => {
    if (seen.has(stored)) return;
    seen.add(stored);
    const kind = fileKind(stored, options.textExtensions ?? []);
    if (kind === null) {
      result.skipped.push(await unknownFormat(file, stored));
      return;
    }
    const limit = options.maxFileSize;
    if (info.size > limit) {
      result.skipped.push({ path: stored, reason: `${formatSize(info.size)} is over the ${formatSize(limit)} limit (--max-file-size)`, kind: "size" });
      return;
    }
    result.files.push({ file, path: stored, base, kind, size: info.size, modified: info.mtime });
  };

  type Rules = { dir: string; test: (relative: string, isDir: boolean) => boolean }[];
  const ignoredBy = (rules: Rules, file: string, isDir: boolean) =>
    rules.some(({ dir, test }) => {
      const relative = toPosix(path.relative(dir, file));
      return relative !== "" && !relative.startsWith("..") && test(relative, isDir);
    });
  const readRules = async (dir: string): Promise<Rules> => {
    const rules: Rules = [];
    for (const name of IGNORE_FILES) {
      let text: string;
      try {
        text = await readFile(path.join(dir, name), "utf8");
      } catch {
        continue;
      }
      const matcher = ignoreFactory({ allowRelativePaths: true }).add(text);
      rules.push({ dir, test: (relative, isDir) => matcher.ignores(isDir ? `${relative}/` : relative) });
    }
    return rules;
  };
  const leftOut = (stored: string, isDir: boolean) => {
    if (excluded && (excluded(stored) || (isDir && excluded(`${stored}/`)))) return true;
    return !isDir && only !== null && !only(stored);
  };

  /** One entry of folder `dir`, whose stored path is `child`: a file considered, a folder walked, or left out. */
  type Entry = { name: string; isDirectory(): boolean; isFile(): boolean; isSymbolicLink(): boolean };
  const visit = async (dir: string, entry: Entry, child: string, base: string, rules: Rules) => {
    const file = path.join(dir, entry.name);
    if (entry.name.includes("\uFFFD") && !(await exists(file))) {
      // A name whose bytes are not UTF-8 reaches here with U+FFFD in their place: no such file.
      result.skipped.push({ path: entry.isDirectory() ? under(child) : child, reason: "its name is not valid UTF-8 (rename it to read it)", kind: "unreadable" });
      return;
    }
    let isDir = entry.isDirectory();
    let info: { size: number; mtime: Date } | undefined;
    if (entry.isSymbolicLink()) {
      try {
        const target = await stat(file);
        if (target.isDirectory()) {
          result.ignored++; // links to folders are not followed
          return;
        }
        if (!target.isFile()) {
          result.skipped.push({ path: child, reason: NOT_REGULAR, kind: "unreadable" }); // (reading a pipe would wait for ever)
          return;
        }
        isDir = false;
        info = target;
      } catch (error) {
        result.skipped.push({ path: child, reason: `a broken link: ${systemReason(error)}`, kind: "unreadable" });
        return;
      }
    }
    if (isDir && NEVER_ENTERED.has(entry.name)) return;
    if (entry.name.startsWith(".")) {
      result.ignored++; // hidden: .env, .DS_Store, editors' swap files, .gitignore itself
      return;
    }
    if (ignoredBy(rules, file, isDir) || leftOut(child, isDir)) {
      result.ignored++;
      return;
    }
    if (isDir) {
      await walkDir(file, child, base, rules);
      return;
    }
    if (!entry.isFile() && !entry.isSymbolicLink()) {
      result.skipped.push({ path: child, reason: NOT_REGULAR, kind: "unreadable" });
      return;
    }
    try {
      info ??= await lstat(file);
    } catch (error) {
      result.skipped.push({ path: child, reason: `cannot be read: ${systemReason(error)}`, kind: "unreadable" });
      return;
    }
    await consider(file, child, base, info);
  };

  /** Whether folder `dir` (stored as `stored`) is another project's: then it is skipped, with the reason. */
  const isProject = async (dir: string, stored: string, names?: ReadonlySet<string>) => {
    const mark = await projectMark(dir, names);
    if (mark === null) return false;
    result.skipped.push({ path: under(stored), reason: projectFolderReason(mark), kind: "project" });
    options.onProjectFolder?.(dir);
    return true;
  };

  const walkDir = async (dir: string, stored: string, base: string, inherited: Rules) => {
    if (skipDirs.has(dir)) return;
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      result.skipped.push({ path: under(stored), reason: `the folder cannot be read: ${systemReason(error)}`, kind: "unreadable" });
      return;
    }
    if (await isProject(dir, stored, new Set(entries.map((entry) => entry.name)))) return;
    const rules = [...inherited, ...(await readRules(dir))];
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) await visit(dir, entry, `${under(stored)}${entry.name}`, base, rules);
  };

  /**
   * The one path `relative` inside folder `root` (stored as `stored`), as the full walk would see it:
   * left out if a folder on the way is hidden, ignored, a link or excluded; nothing if it is gone.
   */
  const walkPath = async (root: string, stored: string, base: string, relative: string) => {
    const names = relative.split("/");
    let dir = root;
    let at = stored;
    let rules = await readRules(root);
    for (const [i, name] of names.entries()) {
      let info: import("node:fs").Stats;
      try {
        info = await lstat(path.join(dir, name));
      } catch {
        return; // gone (the scope makes its objects go)
      }
      const child = `${under(at)}${name}`;
      const entry = { name, isDirectory: () => info.isDirectory(), isFile: () => info.isFile(), isSymbolicLink: () => info.isSymbolicLink() };
      if (i === names.length - 1) return visit(dir, entry, child, base, rules);
      const folder = path.join(dir, name);
      if (!info.isDirectory() || NEVER_ENTERED.has(name) || name.startsWith(".") || skipDirs.has(folder) || ignoredBy(rules, folder, true) || leftOut(child, true)) return;
      if (await isProject(folder, child)) return;
      dir = folder;
      at = child;
      rules = [...rules, ...(await readRules(dir))];
    }
  };

  const named = new Map<string, { absolute: string; target: string }>(); // stored path → the target given for it
  for (const target of targets) {
    const absolute = path.resolve(target);
    const info = await stat(absolute).catch((error: unknown) => {
      // (checked before the add starts: gone since, as a folder --watch watches can be)
      throw new NotFoundError("INPUT_GONE", `${target} cannot be read: ${systemReason(error)}; the objects read from it stay`);
    });
    await refuseProjectData(target);
    const { base, path: stored } = storedPath(absolute, info.isDirectory());
    if (info.isDirectory()) for (const dir of await spelledUnder(absolute, options.skipDirs ?? [])) skipDirs.add(dir);
    // Two folders of one name (a/notes, b/notes) would be stored under one path, the second's files
    // dropped where the first has one of the same name: refused, not merged.
    const other = named.get(stored);
    if (other !== undefined && other.absolute !== absolute) throw new UsageError("SAME_STORED_PATH", `${JSON.stringify(other.target)} and ${JSON.stringify(target)} would both be stored as ${JSON.stringify(stored)}: add them in separate projects, or add their parent folders`);
    named.set(stored, { absolute, target });
    if (info.isDirectory() && options.only) {
      // Only the paths named under this folder (--watch's events): each, and what is under it, is the scope.
      for (const one of options.only) {
        const relative = stored === "" ? one : one.startsWith(`${stored}/`) ? one.slice(stored.length + 1) : null;
        if (relative === null || relative === "" || relative.split("/").includes("..")) continue;
        result.scopes.push(one, `${one}/`);
        await walkPath(absolute, stored, base, relative);
      }
    } else if (info.isDirectory()) {
      result.scopes.push(under(stored));
      await walkDir(absolute, stored, base, []);
    } else if (!info.isFile()) {
      result.scopes.push(stored);
      result.skipped.push({ path: stored, reason: NOT_REGULAR, kind: "unreadable" });
    } else {
      result.scopes.push(stored);
      await consider(absolute, stored, base, info);
    }
  }
  return result;
}

/**
 * Those of `dirs` that lie inside `folder`, as paths under `folder` spelled as given: the project
 * reached through a link (`--project ~/link/notes/p`, `objects add ~/real/notes`) is still the
 * project, not a folder of files to read.
 */
export async function spelledUnder(folder: string, dirs: readonly string[]): Promise<string[]> {
  const real = async (file: string) => realpath(file).catch(() => path.resolve(file));
  const root = await real(folder);
  const out: string[] = [];
  for (const dir of dirs) {
    const relative = path.relative(root, await real(dir));
    if (relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative)) out.push(path.join(folder, relative));
  }
  return out;
}

async function exists(file: string): Promise<boolean> {
  return lstat(file).then(
    () => true,
    () => false,
  );
}

/** Why a file of an extension semsearch does not read is skipped: binary, or text it could read with `--ext`. */
async function unknownFormat(file: string, stored: string): Promise<SkippedFile> {
  const skip = (reason: string, kind: SkipKind = "format") => ({ path: stored, reason, kind });
  const extension = path.posix.extname(stored).slice(1);
  let binary = false;
  try {
    const { open } = await import("node:fs/promises");
    const handle = await open(file, "r");
    try {
      const buffer = Buffer.alloc(8192);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      binary = buffer.subarray(0, bytesRead).includes(0);
    } finally {
      await handle.close();
    }
  } catch (error) {
    return skip(`cannot be read: ${systemReason(error)}`, "unreadable");
  }
  if (binary) return skip(`binary, of a format semsearch does not read${extension ? ` (.${extension})` : ""}`);
  return skip(extension ? `.${extension} is not a format semsearch reads (to read it as plain text: --ext ${extension})` : "no extension, so no known format (rename it, e.g. to .txt)");
}

/** A size for a person: bytes, KiB or MiB. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** A system error's reason, without the path (which the caller names). */
export function systemReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const known: Record<string, string> = { EACCES: "permission denied", EPERM: "permission denied", ENOENT: "it no longer exists", ELOOP: "too many levels of links", EISDIR: "it is a folder" };
  return (code && known[code]) ?? (error instanceof Error ? error.message : String(error));
}
