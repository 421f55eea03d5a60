/**
 * A project's database as files (`<project>/data/`: LanceDB's tables), read and written byte for
 * byte: what `project copy` moves between a local directory and a bucket. Local files, or a bucket's
 * objects (state/s3-store.ts, S3Files); keys are relative to the data folder, `/`-separated.
 */
import { randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, open, readdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fsError } from "./errors.js";
import { parseProjectLocation } from "./location.js";
import type { Project } from "./project.js";
import { s3Config } from "./state/s3-config.js";

export interface DataFile {
  key: string;
  size: number;
}

export interface DataFiles {
  readonly where: string;
  /** Every file, in byte order of their keys (none when the folder does not exist). */
  list(): Promise<DataFile[]>;
  read(key: string): Promise<Readable>;
  /** Writes the file `key` whole (a file half-written is never seen under its name), `size` bytes from `body`. */
  write(key: string, body: Readable, size: number): Promise<void>;
  /** Removes every file (a local folder's temporary files too). */
  clear(): Promise<void>;
  close(): void;
}

/** The data files of a local project. Names starting with a dot (LanceDB's temporary files) are not listed. */
class LocalDataFiles implements DataFiles {
  constructor(readonly where: string) {}

  async list(): Promise<DataFile[]> {
    const files: DataFile[] = [];
    const walk = async (dir: string, prefix: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT" && prefix === "") return;
        throw fsError(error, "read", dir);
      }
      for (const entry of entries) {
        if (entry.name.startsWith(".")) continue;
        const key = prefix + entry.name;
        if (entry.isDirectory()) await walk(path.join(dir, entry.name), `${key}/`);
        else if (entry.isFile()) files.push({ key, size: (await stat(path.join(dir, entry.name))).size });
      }
    };
    await walk(this.where, "");
    return files.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  private file(key: string): string {
    return path.join(this.where, ...key.split("/"));
  }

  async read(key: string): Promise<Readable> {
    const file = this.file(key);
    const stream = createReadStream(file);
    try {
      await new Promise((resolve, reject) => stream.once("open", resolve).once("error", reject));
    } catch (error) {
      throw fsError(error, "read", file);
    }
    return stream;
  }

  async write(key: string, body: Readable, size: number): Promise<void> {
    const file = this.file(key);
    const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(4).toString("hex")}.copy`);
    try {
      await mkdir(path.dirname(file), { recursive: true });
      await pipeline(body, createWriteStream(tmp, { flags: "wx" }));
      const handle = await open(tmp, "r+");
      try {
        const written = (await handle.stat()).size;
        if (written !== size) throw new Error(`${written} bytes arrived of ${size}`);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(tmp, file);
    } catch (error) {
      await rm(tmp, { force: true });
      throw fsError(error, "write", file);
    }
  }

  async clear(): Promise<void> {
    try {
      await rm(this.where, { recursive: true, force: true });
    } catch (error) {
      throw fsError(error, "remove", this.where);
    }
  }

  close(): void {}
}

/** The data files of `project`, local or in a bucket. */
export async function dataFiles(project: Project): Promise<DataFiles> {
  if (!project.remote) return new LocalDataFiles(project.dataDir);
  const location = parseProjectLocation(project.dir);
  if (location.kind !== "remote") throw new Error(`not a bucket project: ${project.dir}`);
  const { S3Files } = await import("./state/s3-store.js");
  return S3Files.open(location.bucket, location.prefix === "" ? "data" : `${location.prefix}/data`, s3Config(process.env));
}
