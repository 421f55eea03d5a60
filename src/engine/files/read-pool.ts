/**
 * Reading documents in worker threads (issue 29): one per core, so a folder's files are parsed in
 * parallel, and each file under a limit of processor time and memory. The parsers are synchronous
 * and some inputs take them minutes (a Markdown file of 20,000 nested emphasis marks, a list nested
 * 1,000 deep, HTML nested 100,000 deep): a thread that overruns is terminated and replaced, and the
 * file skipped with the reason, so one hostile file never holds up or brings down an add or a watcher.
 *
 * The limit is the processor time the reading thread used (issue 40), not the time on the clock: on
 * a loaded machine a thread gets a share of a core, and a clock limit skipped large ordinary files
 * (Node's API docs, changelogs) that a quiet machine reads in seconds. The thread's time is read from
 * outside it, while it works: on Linux from /proc (`/proc/<pid>/task/<tid>/stat`, the thread saying
 * its id), elsewhere with `worker.cpuUsage()` (Node 24.6 and later); where neither exists (macOS or
 * Windows on older Node) the clock is the measure, as before. A thread that waits without working
 * (which no parser should) is stopped after WALL_FACTOR times the limit on the clock.
 */
import { readFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { InternalError } from "../errors.js";
import { UnreadableFile, type FileDocument, type SkipKind } from "./document.js";
import type { FileKind } from "./kinds.js";

/** How much processor time one file may take to read, in ms: SEMSEARCH_FILE_TIMEOUT (seconds), else 30 s. */
export function readTimeoutMs(): number {
  const configured = Number(process.env.SEMSEARCH_FILE_TIMEOUT);
  return Number.isFinite(configured) && configured > 0 ? configured * 1000 : 30_000;
}

/** Heap a reading thread may use, in MiB: a file that needs more is skipped. */
const THREAD_HEAP_MB = 1024;
/** How often the threads at work are looked at, in ms. */
const CHECK_MS = 250;
/** A read still going after this many times its limit on the clock is stopped, whatever its processor time says. */
export const WALL_FACTOR = 10;
/** A thread not ready after this long (or WALL_FACTOR times the limit, if longer), in ms, is taken as unable to start. */
const START_LIMIT_MS = 60_000;
/** Linux counts a thread's time in clock ticks of 1/100 s (USER_HZ, 100 on every architecture Node runs on). */
const TICKS_PER_SECOND = 100;

/** A thread's processor time so far, in ms; null when it cannot be read. */
type ThreadClock = () => Promise<number | null>;

interface Task {
  id: number;
  kind: FileKind;
  bytes: Uint8Array;
  name: string;
  resolve: (document: FileDocument) => void;
  reject: (error: unknown) => void;
  /** When it was sent to its thread (performance.now()), and that thread's processor time then (null until read). */
  sentAt?: number;
  cpuAtStart?: number | null;
}

interface Slot {
  worker: Worker;
  task: Task | null;
  /** Set once the thread said it is ready (and how to read its processor time, if at all). */
  clock: ThreadClock | null | undefined;
  /** A look at its processor time is under way. */
  checking: boolean;
  /** When it was started (performance.now()). */
  startedAt: number;
}

export class ReadPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  private nextId = 0;
  private closed = false;
  private ticker: NodeJS.Timeout | null = null;

  constructor(
    private size = Math.max(1, availableParallelism()),
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
    this.tick(false);
    for (const task of this.queue.splice(0)) task.reject(new InternalError("READ_POOL_CLOSED", "the read pool was closed"));
    await Promise.all(this.slots.splice(0).map((slot) => slot.worker.terminate()));
  }

  private dispatch(): void {
    while (this.queue.length > 0 && !this.closed) {
      const slot = this.slots.find((candidate) => candidate.task === null && candidate.clock !== undefined);
      if (!slot && this.slots.length < this.size) this.spawn();
      if (!slot) break; // (a thread is free again, or ready, later)
      const task = this.queue.shift() as Task;
      slot.task = task;
      task.sentAt = performance.now();
      const clock = slot.clock;
      if (clock) void clock().then((cpu) => (task.cpuAtStart ??= cpu));
      slot.worker.postMessage({ id: task.id, kind: task.kind, bytes: task.bytes, name: task.name });
    }
    this.tick(this.waiting());
  }

  /** Whether a file is being read or waits to be (the threads being unreferenced, the ticker keeps the process up meanwhile). */
  private waiting(): boolean {
    return !this.closed && (this.queue.length > 0 || this.slots.some((slot) => slot.task !== null));
  }

  /** Starts (or stops) looking at the threads at work every CHECK_MS; while it looks, the process stays up. */
  private tick(on: boolean): void {
    if (on && this.ticker === null) this.ticker = setInterval(() => this.check(), CHECK_MS);
    if (!on && this.ticker !== null) {
      clearInterval(this.ticker);
      this.ticker = null;
    }
  }

  /** Stops each read over its limit: its processor time, else (no way to read it) its time on the clock; and WALL_FACTOR times that on the clock. */
  private check(): void {
    const now = performance.now();
    for (const slot of [...this.slots]) {
      if (slot.clock === undefined && now - slot.startedAt > Math.max(START_LIMIT_MS, this.timeoutMs * WALL_FACTOR)) {
        this.slots.splice(this.slots.indexOf(slot), 1); // (before its exit, which would say it again)
        void slot.worker.terminate();
        this.broken(slot, `it did not start within ${seconds(now - slot.startedAt)} s`);
        continue;
      }
      const task = slot.task;
      if (!task || task.sentAt === undefined) continue;
      const wall = now - task.sentAt;
      if (wall > this.timeoutMs * WALL_FACTOR) {
        this.fail(slot, new UnreadableFile(`reading it was not done after ${seconds(wall)} s on the clock (${WALL_FACTOR} times SEMSEARCH_FILE_TIMEOUT), so it was stopped`, "limit"));
      } else if ((slot.clock === null || task.cpuAtStart === null) && wall > this.timeoutMs) {
        // (no way to read its processor time, or none when it started: /proc hidden, say)
        this.fail(slot, new UnreadableFile(`reading it took more than ${seconds(this.timeoutMs)} s (SEMSEARCH_FILE_TIMEOUT), so it was stopped`, "limit"));
      } else if (slot.clock && !slot.checking && typeof task.cpuAtStart === "number") {
        slot.checking = true;
        const start = task.cpuAtStart;
        void slot.clock().then((cpu) => {
          slot.checking = false;
          if (cpu !== null && slot.task === task && cpu - start > this.timeoutMs) {
            this.fail(slot, new UnreadableFile(`reading it took more than ${seconds(this.timeoutMs)} s of processor time (SEMSEARCH_FILE_TIMEOUT), so it was stopped`, "limit"));
          }
        });
      }
    }
  }

  private spawn(): Slot {
    const worker = new Worker(new URL("./read-thread.js", import.meta.url), { resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB } });
    const slot: Slot = { worker, task: null, clock: undefined, checking: false, startedAt: performance.now() };
    type Message = { ready: true; tid: number | null } | { id: number; document?: FileDocument; error?: { unreadable: boolean; kind?: SkipKind; message: string } };
    worker.on("message", (message: Message) => {
      if ("ready" in message) {
        slot.clock = threadClock(worker, message.tid);
        this.dispatch();
        return;
      }
      const task = slot.task;
      if (!task || task.id !== message.id) return;
      this.finish(slot);
      if (message.error) task.reject(message.error.unreadable ? new UnreadableFile(message.error.message, message.error.kind) : new InternalError("READ_FAILED", `reading ${task.name} failed: ${message.error.message}`));
      else task.resolve(message.document as FileDocument);
      this.dispatch();
    });
    worker.on("error", (error: Error & { code?: string }) => {
      if (slot.clock === undefined) return this.broken(slot, error.message);
      const why = error.code === "ERR_WORKER_OUT_OF_MEMORY" ? `reading it needed more than ${THREAD_HEAP_MB} MiB of memory, so it was stopped` : `its reader failed: ${error.message}`;
      this.fail(slot, new UnreadableFile(why, error.code === "ERR_WORKER_OUT_OF_MEMORY" ? "limit" : "unreadable"), false);
    });
    // (a thread that ends by itself, no error said: its file is not waited for)
    worker.on("exit", () => {
      if (!this.slots.includes(slot)) return; // (stopped by fail or close)
      if (slot.clock === undefined) this.broken(slot, "it ended as it started");
      else this.fail(slot, new UnreadableFile("its reader ended without an answer", "unreadable"), false);
    });
    worker.unref();
    this.slots.push(slot);
    return slot;
  }

  private finish(slot: Slot): void {
    slot.task = null;
  }

  /**
   * A thread that failed before it was ready: the pool has one thread fewer from then on (another
   * would likely fail the same way); with none left, the files waiting are refused.
   */
  private broken(slot: Slot, why: string): void {
    const index = this.slots.indexOf(slot);
    if (index !== -1) this.slots.splice(index, 1);
    this.size = Math.max(0, this.size - 1);
    if (this.size === 0) for (const task of this.queue.splice(0)) task.reject(new InternalError("READ_THREAD_FAILED", `no thread reading documents could start: ${why}`));
    this.dispatch();
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

/**
 * How to read a thread's processor time: /proc where the thread gave its id (read from outside,
 * whatever the thread is doing), else `worker.cpuUsage()` where Node has it, else null (the clock).
 */
function threadClock(worker: Worker, tid: number | null): ThreadClock | null {
  if (tid !== null) {
    const file = `/proc/${process.pid}/task/${tid}/stat`;
    return async () => {
      try {
        // (after the command's closing parenthesis: state, then fields 4 to 13, then utime and stime)
        const stat = await readFile(file, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        const ticks = Number(fields[11]) + Number(fields[12]);
        return Number.isFinite(ticks) ? (ticks * 1000) / TICKS_PER_SECOND : null;
      } catch {
        return null; // (the thread has ended)
      }
    };
  }
  const cpuUsage = (worker as Worker & { cpuUsage?: () => Promise<{ user: number; system: number }> }).cpuUsage;
  if (typeof cpuUsage !== "function") return null;
  return async () => {
    try {
      const usage = await cpuUsage.call(worker);
      return (usage.user + usage.system) / 1000;
    } catch {
      return null;
    }
  };
}

function seconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}
