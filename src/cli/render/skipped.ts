/** The one line that ends an `objects add` of files which skipped some: how many, grouped by why. */
import type { SkipKind } from "../../engine/index.js";

/** Each kind of skip as a count reads it (`10 binary or not UTF-8`): for one, and for more. */
const GROUPS: Record<SkipKind, readonly [string, string?]> = {
  format: ["of a format semsearch does not read"],
  encoding: ["binary or not UTF-8"],
  size: ["over --max-file-size"],
  image: ["image without an image index", "images without an image index"],
  invalid: ["not valid as its format", "not valid as their format"],
  limit: ["stopped at a reading limit"],
  unreadable: ["unreadable"],
  id: ["with an id another file has", "with ids other files have"],
  project: ["semsearch project's folder", "semsearch projects' folders"],
};

/**
 * `Skipped 13 files: 10 binary or not UTF-8, 3 over --max-file-size (…).`, the largest group first;
 * folders (a path ending in `/`) are counted as such. Null when nothing was skipped.
 */
export function skippedLine(skipped: readonly { path: string; kind: SkipKind }[]): string | null {
  if (skipped.length === 0) return null;
  const counts = new Map<SkipKind, number>();
  for (const { kind } of skipped) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  const label = (kind: SkipKind, count: number) => (count === 1 ? GROUPS[kind][0] : (GROUPS[kind][1] ?? GROUPS[kind][0]));
  const groups = [...counts].sort(([a, m], [b, n]) => n - m || label(a, m).localeCompare(label(b, n))).map(([kind, count]) => `${count} ${label(kind, count)}`);
  const folders = skipped.filter(({ path }) => path.endsWith("/")).length;
  const files = skipped.length - folders;
  const what = [files > 0 ? plural(files, "file") : "", folders > 0 ? plural(folders, "folder") : ""].filter(Boolean).join(" and ");
  return `Skipped ${what}: ${groups.join(", ")} (each is listed with its reason in the output).`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}
