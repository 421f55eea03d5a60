/**
 * Where a database is: a local directory, or an object store's address (`s3://bucket/prefix/data`),
 * and paths inside it for messages. Pure. A local path never starts with a scheme (location.ts reads
 * `--project`), so the two are told apart by that alone.
 */
import path from "node:path";

/** Whether `where` is an object store's address rather than a local directory. */
export function isRemote(where: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//.test(where);
}

/** `where` joined with `parts` (a path, or an address with `/` between parts). */
export function inside(where: string, ...parts: string[]): string {
  return isRemote(where) ? [where.replace(/\/+$/, ""), ...parts].join("/") : path.join(where, ...parts);
}

/** The folder `where` is in (for an address: without its last part). */
export function parentOf(where: string): string {
  if (!isRemote(where)) return path.dirname(where);
  const trimmed = where.replace(/\/+$/, "");
  const cut = trimmed.lastIndexOf("/");
  return cut > trimmed.indexOf("://") + 2 ? trimmed.slice(0, cut) : trimmed;
}
