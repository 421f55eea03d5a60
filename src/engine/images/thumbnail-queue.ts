/**
 * The queue thumbnails are made in (thumbnail.ts), for a server whose page asks for dozens at once.
 * Work runs in lanes (local files apart from URLs), each with a cap on flights running at once, a
 * cap per group (a URL's host) and a bounded queue, so one slow source holds back neither the
 * others nor what needs no read. Identical work is done once: a request for a key already in flight
 * or waiting joins it. A waiter whose caller has gone (its AbortSignal) leaves at once; a flight that
 * no one waits for any more leaves the queue, or is aborted if it runs. RecentFailures remembers,
 * for a while, sources that failed, so a source that never answers is not asked again and again.
 */
import { CancelledError, RequestRefusedError } from "../errors.js";

export interface LaneLimits {
  /** flights running at once */
  active: number;
  /** flights of one group running at once (default: `active`) */
  perGroup?: number;
  /** flights waiting to start; a new one beyond is refused (503 BUSY) */
  waiting: number;
  /** what the lane makes, for the refusal's message ("thumbnails of image URLs") */
  what: string;
}

export interface FlightOptions {
  lane: string;
  /** the group it counts against in its lane (a URL's host); default: none */
  group?: string;
  /** the caller's: once aborted, the caller stops waiting (CancelledError) */
  signal?: AbortSignal;
}

interface Flight<T> {
  key: string;
  group: string;
  lane: Lane<T>;
  task: (signal: AbortSignal) => Promise<T>;
  controller: AbortController;
  /** callers waiting for it that may still leave (callers without a signal never do) */
  waiters: number;
  /** callers without a signal: the flight runs to its end for them */
  staying: boolean;
  running: boolean;
  settled: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

class Lane<T> {
  running = 0;
  readonly queue: Flight<T>[] = [];
  private readonly groups = new Map<string, number>();

  constructor(readonly limits: LaneLimits) {}

  /** Whether a flight of `group` may start now. */
  free(group: string): boolean {
    return this.running < this.limits.active && (this.groups.get(group) ?? 0) < (this.limits.perGroup ?? this.limits.active);
  }

  /** Counts a flight as running (+1) or done (−1). */
  count(group: string, delta: 1 | -1): void {
    this.running += delta;
    const now = (this.groups.get(group) ?? 0) + delta;
    if (now === 0) this.groups.delete(group);
    else this.groups.set(group, now);
  }

  /** Takes out the waiting flights that may start now, first come first. */
  startable(): Flight<T>[] {
    const started: Flight<T>[] = [];
    for (let i = 0; i < this.queue.length && this.running < this.limits.active; ) {
      const flight = this.queue[i] as Flight<T>;
      if (!this.free(flight.group)) {
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      this.count(flight.group, 1);
      started.push(flight);
    }
    return started;
  }
}

export class FlightQueue<T> {
  private readonly lanes = new Map<string, Lane<T>>();
  private readonly flights = new Map<string, Flight<T>>();

  constructor(lanes: Record<string, LaneLimits>) {
    for (const [name, limits] of Object.entries(lanes)) this.lanes.set(name, new Lane(limits));
  }

  /**
   * What `task` resolves to for `key`: the flight in progress for it if there is one, else a new one
   * in its lane. Throws CancelledError once `signal` aborts, and RequestRefusedError 503 BUSY when a
   * new flight finds its lane's queue full. The task's signal aborts when every caller has gone.
   */
  async run(key: string, options: FlightOptions, task: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const { signal } = options;
    if (signal?.aborted) throw cancelled();
    const flight = this.flights.get(key) ?? this.begin(key, options, task);
    if (!signal) {
      flight.staying = true;
      return flight.settled;
    }
    flight.waiters++;
    return new Promise<T>((resolve, reject) => {
      const leave = () => {
        reject(cancelled());
        this.leave(flight);
      };
      signal.addEventListener("abort", leave, { once: true });
      flight.settled.then(
        (value) => {
          signal.removeEventListener("abort", leave);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener("abort", leave);
          reject(error);
        },
      );
    });
  }

  /** Flights running and waiting in a lane, for a message or a test. */
  load(lane: string): { running: number; waiting: number } {
    const found = this.lane(lane);
    return { running: found.running, waiting: found.queue.length };
  }

  private lane(name: string): Lane<T> {
    const lane = this.lanes.get(name);
    if (!lane) throw new TypeError(`FlightQueue: no lane "${name}"`);
    return lane;
  }

  private begin(key: string, { lane: name, group = "" }: FlightOptions, task: (signal: AbortSignal) => Promise<T>): Flight<T> {
    const lane = this.lane(name);
    if (!lane.free(group) && lane.queue.length >= lane.limits.waiting) {
      throw new RequestRefusedError(503, "BUSY", `The server is making ${lane.running} ${lane.limits.what} and has ${lane.queue.length} waiting: try again shortly`, { headers: { "Retry-After": "1" } });
    }
    let resolve: (value: T) => void = () => {};
    let reject: (error: unknown) => void = () => {};
    const settled = new Promise<T>((yes, no) => {
      resolve = yes;
      reject = no;
    });
    // (a flight that everyone left before it started never settles: nothing waits for it)
    settled.catch(() => {});
    const flight: Flight<T> = { key, group, lane, task, controller: new AbortController(), waiters: 0, staying: false, running: false, settled, resolve, reject };
    this.flights.set(key, flight);
    lane.queue.push(flight);
    this.pump(lane);
    return flight;
  }

  private pump(lane: Lane<T>): void {
    for (const flight of lane.startable()) this.start(flight);
  }

  private start(flight: Flight<T>): void {
    flight.running = true;
    const { lane, group } = flight;
    void Promise.resolve()
      .then(() => flight.task(flight.controller.signal))
      .then(flight.resolve, flight.reject)
      .finally(() => {
        if (this.flights.get(flight.key) === flight) this.flights.delete(flight.key);
        lane.count(group, -1);
        this.pump(lane);
      });
  }

  /** A waiter has gone: a flight left with no one is dropped from its queue, or aborted if it runs. */
  private leave(flight: Flight<T>): void {
    flight.waiters--;
    if (flight.waiters > 0 || flight.staying || this.flights.get(flight.key) !== flight) return;
    // A new request for the key starts afresh rather than joining what is being abandoned.
    this.flights.delete(flight.key);
    if (flight.running) {
      flight.controller.abort();
      return;
    }
    const queue = flight.lane.queue;
    queue.splice(queue.indexOf(flight), 1);
  }
}

function cancelled(): CancelledError {
  return new CancelledError("CANCELLED", "The request was cancelled before its thumbnail was made");
}

/**
 * Keys that failed, each remembered for `forMs` from its last failure; at most `most` (the oldest
 * forgotten first). `now` is the clock in ms (performance.now() by default).
 */
export class RecentFailures {
  private readonly failed = new Map<string, number>();

  constructor(
    private readonly forMs: number,
    private readonly most: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  add(key: string): void {
    this.failed.delete(key);
    this.failed.set(key, this.now() + this.forMs);
    for (const oldest of this.failed.keys()) {
      if (this.failed.size <= this.most) break;
      this.failed.delete(oldest);
    }
  }

  has(key: string): boolean {
    const until = this.failed.get(key);
    if (until === undefined) return false;
    if (this.now() < until) return true;
    this.failed.delete(key);
    return false;
  }

  get size(): number {
    return this.failed.size;
  }
}
