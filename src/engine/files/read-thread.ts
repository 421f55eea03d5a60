/** A thread of the read pool (read-pool.ts): reads the documents it is sent, one at a time. */
import { parentPort } from "node:worker_threads";
import { UnreadableFile } from "./document.js";
import type { FileKind } from "./kinds.js";
import { readDocument } from "./read-document.js";

const port = parentPort;
if (!port) throw new Error("read-thread must run as a worker thread");

port.on("message", (task: { id: number; kind: FileKind; bytes: Uint8Array; name: string }) => {
  readDocument(task.kind, task.bytes, task.name).then(
    (document) => port.postMessage({ id: task.id, document }),
    (error: unknown) => port.postMessage({ id: task.id, error: { unreadable: error instanceof UnreadableFile, message: error instanceof UnreadableFile ? error.reason : error instanceof Error ? error.message : String(error) } }),
  );
});
