/**
 * A thread of the read pool (read-pool.ts): reads the documents it is sent, one at a time. It first
 * says which thread of the system it is (Linux: from /proc/thread-self), so that the pool can read
 * the processor time it uses.
 */
import { readlinkSync } from "node:fs";
import { parentPort } from "node:worker_threads";
import { failpoint } from "../failpoint.js";
import { UnreadableFile } from "./document.js";
import type { FileKind } from "./kinds.js";
import { readDocument } from "./read-document.js";

const port = parentPort;
if (!port) throw new Error("read-thread must run as a worker thread");

/** This thread's id in the system (`<pid>/task/<tid>`), or null where /proc does not say it. */
function systemThreadId(): number | null {
  try {
    const match = /^(\d+)\/task\/(\d+)$/.exec(readlinkSync("/proc/thread-self"));
    return match && Number(match[1]) === process.pid ? Number(match[2]) : null;
  } catch {
    return null;
  }
}

port.on("message", (task: { id: number; kind: FileKind; bytes: Uint8Array; name: string }) => {
  // (`files:read:pause` stops this thread 3 s without using the processor, as a loaded machine would)
  failpoint("files:read");
  readDocument(task.kind, task.bytes, task.name).then(
    (document) => port.postMessage({ id: task.id, document }),
    (error: unknown) => port.postMessage({ id: task.id, error: { unreadable: error instanceof UnreadableFile, kind: error instanceof UnreadableFile ? error.kind : undefined, message: error instanceof UnreadableFile ? error.reason : error instanceof Error ? error.message : String(error) } }),
  );
});
port.postMessage({ ready: true, tid: systemThreadId() });
