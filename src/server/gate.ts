/**
 * A cap on work running at once, with a bounded queue: beyond both, a request is refused at once
 * (503 with Retry-After) rather than piling up until every client times out.
 */
import { RequestRefusedError } from "../engine/index.js";

export class Gate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly maxActive: number,
    private readonly maxWaiting: number,
    /** What runs, for the refusal's message ("searches", "adds"). */
    private readonly what = "searches",
  ) {}

  /** Runs `fn` when a place is free; RequestRefusedError 503 BUSY when the queue is full too. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.maxActive) {
      if (this.waiting.length >= this.maxWaiting) {
        throw new RequestRefusedError(503, "BUSY", `The server is running ${this.active} ${this.what} and has ${this.waiting.length} waiting: try again shortly`, { headers: { "Retry-After": "1" } });
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.active++;
    }
    try {
      return await fn();
    } finally {
      // The place passes to the next waiter as it is (active stays the same), or is freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
