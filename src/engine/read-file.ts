/** Reading a whole file that must be a regular file of bounded size, without ever blocking on a FIFO or device. */
import { constants, type Stats } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";

export type FileRead = { bytes: Buffer } | { problem: "directory" | "not regular" | "too large"; stat: Stats };

/**
 * Reads `file` whole when it is a regular file of at most `maxBytes` (opened non-blocking, so a FIFO
 * or device is refused, not waited on; with `noFollow`, a symbolic link is refused too). File-system
 * errors (ENOENT, EACCES, ELOOP…) are thrown as they are.
 */
export async function readRegularFile(file: string, maxBytes: number, options: { noFollow?: boolean } = {}): Promise<FileRead> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (options.noFollow ? (constants.O_NOFOLLOW ?? 0) : 0));
    const stat = await handle.stat();
    if (stat.isDirectory()) return { problem: "directory", stat };
    if (!stat.isFile()) return { problem: "not regular", stat };
    if (stat.size > maxBytes) return { problem: "too large", stat };
    const bytes = Buffer.alloc(stat.size);
    let filled = 0;
    while (filled < bytes.byteLength) {
      const { bytesRead } = await handle.read(bytes, filled, bytes.byteLength - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return { bytes: bytes.subarray(0, filled) };
  } finally {
    await handle?.close().catch(() => {});
  }
}
