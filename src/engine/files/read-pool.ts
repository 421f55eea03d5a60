/**
 * Reading documents in worker threads (issue 29): one per core, so a folder's files are parsed in
 * parallel, and each file under a time and memory limit. The parsers are synchronous and some inputs
 * take them minutes (a Markdown file of 20,000 nested emphasis marks, a list nested 1,000 deep, HTML
 * nested 100,000 deep): a thread that overruns is terminated and replaced, and the file skipped with
 * the reason, so one hostile file never holds up or brings down an add or a watcher.
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { InternalError } from "../errors.js";
import { UnreadableFile, type FileDocument } from "./document.js";
import type { FileKind } from "./kinds.js";

/** How long one file may take to read, in ms: SEMSEARCH_FILE_TIMEOUT (seconds), else 30 s. */
export function readTimeoutMs(): number {
  const configured = Number(process.env.SEMSEARCH_FILE_TIMEOUT);
  return Number.isFinite(configured) && configured > 0 ? configured * 1000 : 30_000;
}

/** Heap a reading thread may use, in MiB: a file that needs more is skipped. */
const THREAD_HEAP_MB = 1024;

interface Task {
  id: number;
  kind: FileKind;
  bytes: Uint8Array;
  name: string;
  resolve: (document: FileDocument) => void;
  reject: (error: unknown) => void;
}

interface Slot {
  worker: Worker;
  task: Task | null;
  timer: NodeJS.Timeout | null;
}

export class ReadPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  private nextId = 0;
  private closed = false;

  constructor(
    private readonly size = Math.max(1, availableParallelism()),
    private readonly timeoutMs = readTimeoutMs(),
  ) {}

  /** Reads one document; UnreadableFile when it cannot be read as its kind, or takes too long or too much memory. */
  read(kind: FileKind, bytes: Uint8Array, name: string): Promise<FileDocument> {
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, kind, bytes, name, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const task of this.queue.splice(0)) task.reject(new InternalError("READ_POOL_CLOSED", "the read pool was closed"));
    await Promise.all(this.slots.splice(0).map((slot) => slot.worker.terminate()));
  }

  private dispatch(): void {
    while (this.queue.length > 0 && !this.closed) {
      let slot = this.slots.find((candidate) => candidate.task === null);
      if (!slot && this.slots.length < this.size) slot = this.spawn();
      if (!slot) return;
      const task = this.queue.shift() as Task;
      slot.task = task;
      slot.timer = setTimeout(() => this.fail(slot as Slot, new UnreadableFile(`reading it took more than ${Math.round(this.timeoutMs / 1000)} s (SEMSEARCH_FILE_TIMEOUT), so it was stopped`)), this.timeoutMs);
      slot.worker.postMessage({ id: task.id, kind: task.kind, bytes: task.bytes, name: task.name });
    }
  }

  private spawn(): Slot {
    const worker = new Worker(new URL("./read-thread.js", import.meta.url), { resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB } });
    const slot: Slot = { worker, task: null, timer: null };
    worker.on("message", (message: { id: number; document?: FileDocument; error?: { unreadable: boolean; message: string } }) => {
      const task = slot.task;
      if (!task || task.id !== message.id) return;
      this.finish(slot);
      if (message.error) task.reject(message.error.unreadable ? new UnreadableFile(message.error.message) : new InternalError("READ_FAILED", `reading ${task.name} failed: ${message.error.message}`));
      else task.resolve(message.document as FileDocument);
      this.dispatch();
    });
    worker.on("error", (error: Error & { code?: string }) => {
      const why = error.code === "ERR_WORKER_OUT_OF_MEMORY" ? `reading it needed more than ${THREAD_HEAP_MB} MiB of memory, so it was stopped` : `its reader failed: ${error.message}`;
      this.fail(slot, new UnreadableFile(why), false);
    });
    worker.unref();
    this.slots.push(slot);
    return slot;
  }

  private finish(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.task = null;
  }

  /** Ends a slot's task with `error`, and replaces its thread (terminated first when still running). */
  private fail(slot: Slot, error: UnreadableFile, terminate = true): void {
    const task = slot.task;
    this.finish(slot);
    const index = this.slots.indexOf(slot);
    if (index !== -1) this.slots.splice(index, 1);
    if (terminate) void slot.worker.terminate();
    task?.reject(error);
    this.dispatch();
  }
}
