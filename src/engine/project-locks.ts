/**
 * Who may write a project, and who indexes it: one writer at a time (the write lock) and one worker
 * (the worker lock). A local project keeps them as lock files naming their process (lock.ts); a
 * bucket project as leases in its state store (state/lease.ts), which any machine can take and which
 * expire when their holder stops renewing them. Project and the worker use them through this one
 * interface.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import path from "node:path";
import { ConflictError } from "./errors.js";
import { acquireLock, describeHolder, lockHolder, tryLock } from "./lock.js";
import { currentOwner, ownerAlive } from "./owner.js";
import { acquireLease, describeLeaseHolder, leaseState, type HeldLease, type LeaseHolder } from "./state/lease.js";
import type { StateStore } from "./state/store.js";

export type AsyncRelease = () => Promise<void>;

/** A worker's claim on one index's work (see ProjectLocks.claim). */
export interface Claim {
  /** Whether the claim is still this worker's (checked before each commit of the index's rows). */
  stillHeld(): Promise<boolean>;
  release(): Promise<void>;
}

/** The holder of the worker lock, as `worker status` shows it. */
export interface WorkerHolder {
  pid: number;
  /** the machine it runs on, for a bucket project's worker (null: this machine's project) */
  host: string | null;
}

export interface ProjectLocks {
  /**
   * Takes the write lock, waiting up to `timeoutMs` (ConflictError LOCKED naming the holder). `fenced`
   * is true when a holder that died was taken over: its uncommitted writes must be fenced off before
   * anything is written (LanceStore.fence).
   */
  acquireWrite(timeoutMs?: number): Promise<{ release: AsyncRelease; fenceNeeded: boolean; stillHeld: () => Promise<boolean> }>;
  /** Checks, once, that the project's store can hold locks (before the first write to a new project). */
  checkStore(): Promise<void>;
  /** Who holds the write lock, for messages. */
  describeWriter(): Promise<string>;
  /** Whether a live process holds the write lock. */
  writerLive(): Promise<boolean>;
  /** Takes the worker lock if no live worker holds it; null when one does (the background worker, one per project). */
  tryWorker(): Promise<AsyncRelease | null>;
  /**
   * Registers a foreground worker (`semsearch worker`). In a local project it takes the worker lock
   * (one worker per project: null when another holds it); in a bucket project any number join, and
   * share the work by claiming indexes.
   */
  joinWorkers(): Promise<AsyncRelease | null>;
  /**
   * Claims index `indexId` for this worker: null when another live worker holds it. A local project
   * has one worker, whose claims always hold; in a bucket project a claim is a lease that expires when
   * its worker stops renewing it, and is then taken over.
   */
  claim(indexId: string): Promise<Claim | null>;
  /** The live worker, or null. */
  worker(): Promise<WorkerHolder | null>;
  /** The live worker, described for messages. */
  describeWorker(): Promise<string>;
}

/** A local project's locks: `write.lock` and `worker.lock` in its directory. */
export class FileLocks implements ProjectLocks {
  readonly writeLock: string;
  readonly workerLock: string;

  constructor(dir: string) {
    this.writeLock = path.join(dir, "write.lock");
    this.workerLock = path.join(dir, "worker.lock");
  }

  async acquireWrite(timeoutMs?: number) {
    const release = await acquireLock(this.writeLock, timeoutMs);
    // (a lock is taken only from a process that is gone, which commits nothing more: no fence needed)
    return { release: async () => release(), fenceNeeded: false, stillHeld: async () => true };
  }

  async checkStore(): Promise<void> {
    // (a local directory holds lock files: nothing to check)
  }

  async describeWriter(): Promise<string> {
    return describeHolder(lockHolder(this.writeLock));
  }

  async writerLive(): Promise<boolean> {
    return lockHolder(this.writeLock) !== null;
  }

  async tryWorker(): Promise<AsyncRelease | null> {
    const release = tryLock(this.workerLock);
    return release && (async () => release());
  }

  joinWorkers(): Promise<AsyncRelease | null> {
    return this.tryWorker();
  }

  async claim(): Promise<Claim> {
    // (the one worker of a local project, by worker.lock: nothing to share)
    return { stillHeld: async () => true, release: async () => {} };
  }

  async worker(): Promise<WorkerHolder | null> {
    const holder = lockHolder(this.workerLock);
    return holder && { pid: holder.pid, host: null };
  }

  async describeWorker(): Promise<string> {
    return describeHolder(lockHolder(this.workerLock));
  }
}

/** The lease names of foreground workers' presences in a bucket project. */
const WORKERS = "workers-";

/**
 * How long a bucket project's leases last after their holder's last renewal: SEMSEARCH_LEASE_SECONDS
 * (1 to 3600; a value that is not one is ignored), else 30 s. Shorter, a dead writer's lease is taken
 * over sooner, at the price of more renewals (one every third of it) and of a long pause (a GC, a
 * stopped container) costing the lease.
 */
export function leaseTtlMs(env: Readonly<Record<string, string | undefined>> = process.env): number {
  const seconds = Number(env.SEMSEARCH_LEASE_SECONDS?.trim() || Number.NaN);
  return Number.isFinite(seconds) && seconds >= 1 && seconds <= 3600 ? Math.round(seconds * 1000) : 30_000;
}

/**
 * A bucket project's locks: the leases `write` and `worker` in its state store. Before the first
 * lease is taken, `checkStore` runs once (S3StateStore.checkConditionalWrites: a store that ignores
 * create-if-absent is refused before anything is written); readers, who take no lease, need not
 * be allowed to write.
 */
export class LeaseLocks implements ProjectLocks {
  private checked: Promise<void> | undefined;

  constructor(
    private readonly store: StateStore,
    private readonly probe: () => Promise<void>,
  ) {}

  async checkStore(): Promise<void> {
    await this.checkedStore();
  }

  private async checkedStore(): Promise<StateStore> {
    this.checked ??= this.probe();
    this.checked.catch(() => {
      this.checked = undefined;
    });
    await this.checked;
    return this.store;
  }

  /**
   * A holder of this machine that is gone is known dead at once, without waiting for its lease to
   * expire: the same host name and the same boot (a container's host name may be shared by others).
   */
  private readonly options = {
    ttlMs: leaseTtlMs(),
    ...(currentOwner().start === undefined ? {} : { start: currentOwner().start }),
    holderDead: (holder: { host: string; pid: number; start?: string }) => {
      const boot = (start?: string) => start?.split(":")[0];
      const mine = currentOwner().start;
      if (holder.host !== hostname() || holder.start === undefined || mine === undefined || boot(holder.start) !== boot(mine)) return false;
      return !ownerAlive({ pid: holder.pid, start: holder.start });
    },
  };

  /** Takes lease `name` (waiting up to `waitMs`) and renews it until released. */
  private async hold(name: string, waitMs: number): Promise<{ lease: HeldLease; stillHeld: () => Promise<boolean>; release: AsyncRelease }> {
    const lease = await acquireLease(await this.checkedStore(), name, { ...this.options, waitMs });
    let lost = false;
    const stop = lease.keepAlive(() => {
      lost = true;
    });
    return {
      lease,
      stillHeld: async () => !lost && (await lease.holds()),
      release: async () => {
        stop();
        await lease.release();
      },
    };
  }

  async acquireWrite(timeoutMs = 120_000) {
    const { lease, stillHeld, release } = await this.hold("write", timeoutMs);
    return { fenceNeeded: lease.fenceNeeded, stillHeld, release };
  }

  async describeWriter(): Promise<string> {
    return describeLeaseHolder((await leaseState(this.store, "write"))?.holder ?? null);
  }

  async writerLive(): Promise<boolean> {
    return this.live("write");
  }

  private async live(name: string): Promise<boolean> {
    const state = await leaseState(this.store, name);
    if (state === null || state.released || state.expiresAt <= (await this.store.now())) return false;
    return !(state.holder !== null && this.options.holderDead(state.holder));
  }

  /** Takes lease `name` if no live process holds it, renewing it until released; null when one does. */
  private async tryHold(name: string): Promise<{ stillHeld: () => Promise<boolean>; release: AsyncRelease } | null> {
    if (await this.live(name)) return null;
    try {
      return await this.hold(name, 0);
    } catch (error) {
      if (error instanceof ConflictError && error.code === "LOCKED") return null; // another took it first
      throw error;
    }
  }

  async tryWorker(): Promise<AsyncRelease | null> {
    return (await this.tryHold("worker"))?.release ?? null;
  }

  /**
   * A foreground worker's presence, `workers-<random>` (what `worker` finds, so that commands start
   * no background worker beside it); its records are removed when it leaves.
   */
  async joinWorkers(): Promise<AsyncRelease> {
    // (the presences of workers that were killed, each named for its worker alone, are dropped by
    // the workers that come after: readers, who may hold read-only credentials, write nothing)
    for (const name of await this.presences()) if (!(await this.live(name))) await this.removeLease(name);
    const name = `${WORKERS}${randomBytes(8).toString("hex")}`;
    const held = await this.tryHold(name);
    if (held === null) throw new Error(`the fresh presence ${name} is taken`); // (random: never)
    return async () => {
      await held.release();
      await this.removeLease(name);
    };
  }

  /** The lease names of foreground workers' presences. */
  private async presences(): Promise<string[]> {
    return (await this.store.list("leases")).filter((name) => name.startsWith(WORKERS));
  }

  private async removeLease(name: string): Promise<void> {
    for (const entry of await this.store.list(`leases/${name}`)) await this.store.remove(`leases/${name}/${entry}`);
  }

  async claim(indexId: string): Promise<Claim | null> {
    return this.tryHold(`claim-${indexId}`);
  }

  /** The live workers' leases: the background worker's, then the foreground workers' presences. */
  private async liveWorkers(): Promise<LeaseHolder[]> {
    const live: LeaseHolder[] = [];
    for (const name of ["worker", ...(await this.presences())]) {
      if (!(await this.live(name))) continue;
      const holder = (await leaseState(this.store, name))?.holder;
      if (holder) live.push(holder);
    }
    return live;
  }

  async worker(): Promise<WorkerHolder | null> {
    const [holder] = await this.liveWorkers();
    return holder ? { pid: holder.pid, host: holder.host } : null;
  }

  async describeWorker(): Promise<string> {
    const [holder] = await this.liveWorkers();
    return describeLeaseHolder(holder ?? null);
  }
}
