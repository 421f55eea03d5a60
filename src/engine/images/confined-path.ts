/**
 * Resolving a file inside an image root (`--image-root`) the way the kernel would, one path
 * component and one symbolic link at a time, without ever looking outside the root.
 *
 * `realpath` cannot be used for this: it fails on a link whose target is missing, so a link out of
 * the root to a missing file would look like a missing file inside, and the error would tell a
 * client whether a file outside exists. Here a step that leaves the root ends the walk at once
 * ("outside"), before anything outside is looked at, so the answer depends only on what is inside:
 * a link out says "outside" whether or not its target exists, a chain of links is followed link by
 * link (one step out is outside, even if a later link would lead back), and `..` in a link's
 * target is taken on the real folder the link is in.
 */
import { lstat, readlink, realpath } from "node:fs/promises";
import path from "node:path";

/** Symbolic links followed in one path at most (Linux's limit, after which it fails with ELOOP). */
const MAX_SYMBOLIC_LINKS = 40;

/**
 * `real`: the file's path with every link resolved, inside the root; `outside`: the path, or a link
 * on it, leads out of the root; `missing`: it does not exist inside (a component is missing, or is
 * a file where a folder is needed); `loop`: more than MAX_SYMBOLIC_LINKS links.
 */
export type ConfinedPath = { real: string } | { problem: "outside" | "missing" | "loop" };

const within = (folder: string, candidate: string) => candidate === folder || candidate.startsWith(folder.endsWith(path.sep) ? folder : folder + path.sep);

/** Components of a relative path or of a link's target (an absolute one's root aside). */
function components(target: string): string[] {
  return target.slice(path.parse(target).root.length).split(path.sep).filter((name) => name !== "" && name !== ".");
}

/**
 * Resolves `file` (absolute) inside `root`. File-system errors other than a missing component
 * (EACCES, ENAMETOOLONG…) are thrown as they are.
 */
export async function resolveConfined(file: string, root: string): Promise<ConfinedPath> {
  const named = path.resolve(root);
  let real: string;
  try {
    real = await realpath(named);
  } catch {
    return { problem: "missing" };
  }
  const relative = path.relative(named, path.resolve(file));
  if (relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) return { problem: "outside" };
  const inside = (candidate: string) => within(real, candidate);
  // The root's own ancestors are real folders (`real` has no links), crossed without being looked at.
  const onTheWay = (candidate: string) => within(candidate, real);
  const namedParts = components(named);
  const pending = components(relative);
  let current = real;
  let links = 0;
  for (let name = pending.shift(); name !== undefined; name = pending.shift()) {
    const next = name === ".." ? path.dirname(current) : path.join(current, name);
    if (!inside(next)) {
      if (!onTheWay(next)) return { problem: "outside" };
      current = next;
      continue;
    }
    if (name === "..") {
      current = next;
      continue;
    }
    const stats = await lstat(next).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT" || error.code === "ENOTDIR") return null;
      throw error;
    });
    if (stats === null) return { problem: "missing" };
    if (stats.isSymbolicLink()) {
      if (++links > MAX_SYMBOLIC_LINKS) return { problem: "loop" };
      const target = await readlink(next);
      const parts = components(target);
      if (path.isAbsolute(target)) {
        // An absolute target written through the root's own name (a link to it) starts at the root.
        const through = namedParts.every((part, i) => parts[i] === part);
        current = through ? real : path.parse(target).root;
        if (through) parts.splice(0, namedParts.length);
      }
      pending.unshift(...parts);
      continue;
    }
    if (pending.length > 0 && !stats.isDirectory()) return { problem: "missing" };
    current = next;
  }
  return inside(current) ? { real: current } : { problem: "outside" };
}
