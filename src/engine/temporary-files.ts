/**
 * Temporary files written beside their destination and renamed into place, named for the writing
 * process: another process tells one being written from one a killed writer left (images cache,
 * compiled models).
 */
import { randomBytes } from "node:crypto";
import { processAlive } from "./owner.js";

const TEMPORARY = /\.tmp-(\d+)-[0-9a-f]+$/;

/** A temporary name beside `file`, naming this process. */
export function temporaryPath(file: string): string {
  return `${file}.tmp-${process.pid}-${randomBytes(6).toString("hex")}`;
}

/** Whether `name` is a temporary file whose writer is no longer running (safe to remove). */
export function abandonedTemporary(name: string): boolean {
  const pid = TEMPORARY.exec(name)?.[1];
  return pid !== undefined && !processAlive(Number(pid));
}
