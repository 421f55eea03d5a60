/**
 * The state store of a local project: one file per record under a folder of the project. A record is
 * written to a temporary file and hard-linked into place, which fails when a record is there: a crash
 * or a full disk never leaves a record half-written, and of two processes creating one key, one wins.
 * Temporary files start with a dot and are never listed.
 */
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, linkSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";
import { fsError } from "../errors.js";
import { checkKey, type StateObject, type StateStore } from "./store.js";

export class LocalStateStore implements StateStore {
  constructor(readonly where: string) {}

  private file(key: string): string {
    checkKey(key);
    return path.join(this.where, ...key.split("/"));
  }

  async get(key: string): Promise<StateObject | null> {
    const file = this.file(key);
    try {
      const stat = lstatSync(file);
      if (!stat.isFile()) throw Object.assign(new Error(`${file} is not a file`), { code: "EISDIR" });
      return { body: readFileSync(file, "utf8"), writtenAt: stat.mtimeMs };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw fsError(error, "read", file);
    }
  }

  async createIfAbsent(key: string, body: string): Promise<boolean> {
    const file = this.file(key);
    const dir = path.dirname(file);
    const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
    try {
      mkdirSync(dir, { recursive: true });
      const fd = openSync(tmp, "wx", 0o600);
      try {
        writeSync(fd, body);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      linkSync(tmp, file);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST" && (error as NodeJS.ErrnoException).syscall === "link") return false;
      throw fsError(error, "write", file);
    } finally {
      try {
        unlinkSync(tmp);
      } catch {
        // not made, or gone
      }
    }
  }

  async list(folder: string, after?: string, limit?: number): Promise<string[]> {
    checkKey(folder, true);
    const dir = path.join(this.where, ...folder.split("/").filter((part) => part !== ""));
    try {
      return readdirSync(dir)
        .filter((name) => !name.startsWith(".") && (after === undefined || name > after))
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
        .slice(0, limit);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw fsError(error, "read", dir);
    }
  }

  async remove(key: string): Promise<void> {
    const file = this.file(key);
    try {
      unlinkSync(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw fsError(error, "remove", file);
    }
  }

  async now(): Promise<number> {
    return Date.now();
  }
}
