/**
 * Leases: one writer at a time per set of tables, across processes and machines, through the state
 * store alone (create-if-absent; see store.ts and docs/design/object-storage.md).
 *
 * INVARIANT. A write is acknowledged only by the holder of the newest token, and no commit made
 * under an older token survives unless it was in the table before the newest token's taker read it.
 * It holds because:
 *   - tokens are records `leases/<name>/<token>` made with create-if-absent: of two takers of one
 *     token, one wins, and a token is taken only after the one before it expired or was released;
 *   - a taker of an expired token fences (`fenceNeeded`): it restores the latest version of each table
 *     the lease covers, and Lance refuses every commit whose base version predates that restore;
 *   - a holder fixes its base version before it checks that its token is the newest (`holds`), and
 *     checks again after its commit before it acknowledges anything: a commit that landed between a
 *     taker's read and its restore (which the restore erases) is one whose holder then sees the newer
 *     token and does not acknowledge.
 * Time is the store's clock: a lease expires `ttlMs` after the store wrote its newest heartbeat.
 */
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { ConflictError, EnvironmentError } from "../errors.js";
import type { StateStore } from "./store.js";

/** Who holds a lease, for messages and for telling a dead local holder. */
export interface LeaseHolder {
  host: string;
  pid: number;
  /** `<boot id>:<start ticks>` where the platform tells (owner.ts) */
  start?: string;
  command: string;
}

export interface LeaseOptions {
  /** How long a lease lasts after its newest heartbeat (default 30 s). */
  ttlMs?: number;
  /** How long `acquire` waits for a held lease before ConflictError LOCKED (default 120 s). */
  waitMs?: number;
  /**
   * Whether a holder is known dead before its lease expires (a local project: a process of this
   * machine that is gone). Only a taker of a dead holder's lease is quicker; correctness never
   * depends on it, since a taker fences either way.
   */
  holderDead?: (holder: LeaseHolder) => boolean;
}

interface TokenRecord {
  holder: LeaseHolder;
  ttlMs: number;
}

/** What the store says of a lease now. */
export interface LeaseState {
  token: number;
  holder: LeaseHolder | null;
  released: boolean;
  /** the store's time at which it expires (its newest heartbeat + ttl) */
  expiresAt: number;
}

const DIGITS = 12;
const tokenName = (token: number) => String(token).padStart(DIGITS, "0");
const HEARTBEAT = /^(\d{12})\.hb\.(\d{8})$/;

/** The longest lease a token record may ask for: a longer one is damage, and would keep the lease from ever expiring. */
const MAX_TTL_MS = 60 * 60_000;
const DEFAULT_TTL_MS = 30_000;

/**
 * What a token record says, each part checked: a damaged record (not JSON, a holder that is not
 * one, a ttl that is not a number of milliseconds up to an hour) has an unknown holder and lasts
 * the default time, so it neither blocks the lease forever nor names a holder that is not one.
 */
function readToken(body: string): { holder: LeaseHolder | null; ttlMs: number | null } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { holder: null, ttlMs: null };
  }
  const { holder, ttlMs } = (typeof parsed === "object" && parsed !== null ? parsed : {}) as { holder?: unknown; ttlMs?: unknown };
  const h = (typeof holder === "object" && holder !== null ? holder : {}) as Partial<Record<keyof LeaseHolder, unknown>>;
  const validHolder = typeof h.host === "string" && Number.isSafeInteger(h.pid) && typeof h.command === "string" && (h.start === undefined || typeof h.start === "string");
  return {
    holder: validHolder ? (holder as LeaseHolder) : null,
    ttlMs: typeof ttlMs === "number" && Number.isFinite(ttlMs) && ttlMs > 0 && ttlMs <= MAX_TTL_MS ? ttlMs : null,
  };
}

/** A listed record that cannot be read twice in a row: something else is at its key (a folder, say). */
function unreadable(store: StateStore, key: string): EnvironmentError {
  return new EnvironmentError("CORRUPT_PROJECT", `The lease record ${key} in ${store.where} is listed but cannot be read: something other than a record is there`, {
    hint: "Something other than semsearch changed the project's state: remove what is at that key.",
  });
}

/**
 * The newest token of lease `name` and its state, or null when it was never taken. A record listed
 * but gone when read (a token pruned by a newer taker, a heartbeat removed by a newer one) means a
 * newer one is there: the folder is listed again. Read without its newest heartbeat, a live lease
 * would look expired and be taken over from its holder.
 */
export async function leaseState(store: StateStore, name: string): Promise<LeaseState | null> {
  const folder = `leases/${name}`;
  let gone: string | null = null;
  for (;;) {
    const names = await store.list(folder);
    const tokens = names.filter((entry) => /^\d{12}$/.test(entry));
    const newest = tokens.at(-1);
    if (newest === undefined) return null;
    const record = await store.get(`${folder}/${newest}`);
    if (record === null) {
      if (gone === newest) throw unreadable(store, `${folder}/${newest}`);
      gone = newest;
      continue;
    }
    const parsed = readToken(record.body);
    const ttl = parsed.ttlMs ?? DEFAULT_TTL_MS;
    const beats = names.filter((entry) => HEARTBEAT.exec(entry)?.[1] === newest);
    const last = beats.at(-1);
    const beat = last === undefined ? null : await store.get(`${folder}/${last}`);
    if (last !== undefined && beat === null) {
      if (gone === last) throw unreadable(store, `${folder}/${last}`);
      gone = last;
      continue;
    }
    return {
      token: Number(newest),
      holder: parsed.holder,
      released: names.includes(`${newest}.released`),
      expiresAt: Math.max(record.writtenAt, beat?.writtenAt ?? 0) + ttl,
    };
  }
}

/** A lease this process took: its token, and whether the taker must fence before it writes. */
export class HeldLease {
  private beats = 0;
  private lost = false;

  constructor(
    private readonly store: StateStore,
    readonly name: string,
    readonly token: number,
    /** true when the lease was taken over from a holder that neither released it nor was seen to finish */
    readonly fenceNeeded: boolean,
    readonly ttlMs: number,
  ) {}

  private key(suffix = ""): string {
    return `leases/${this.name}/${tokenName(this.token)}${suffix}`;
  }

  /** Whether this token is still the newest (step 2 and step 4 of a commit; see the invariant). */
  async holds(): Promise<boolean> {
    return (await this.held()) !== null;
  }

  /** Whether this token is the newest and will not expire within `marginMs` (before a commit). */
  async holdsFor(marginMs: number): Promise<boolean> {
    const state = await this.held();
    return state !== null && state.expiresAt - (await this.store.now()) > marginMs;
  }

  /** The lease's state while this token is the newest and not released; null (and lost for good) else. */
  private async held(): Promise<LeaseState | null> {
    if (this.lost) return null;
    const state = await leaseState(this.store, this.name);
    if (state?.token === this.token && !state.released) return state;
    this.lost = true;
    return null;
  }

  /** Extends the lease by a heartbeat; false when the token is no longer the newest. */
  async renew(): Promise<boolean> {
    if (!(await this.holds())) return false;
    const beat = ++this.beats;
    await this.store.createIfAbsent(this.key(`.hb.${String(beat).padStart(8, "0")}`), "");
    if (beat > 2) await this.store.remove(this.key(`.hb.${String(beat - 2).padStart(8, "0")}`));
    return this.holds();
  }

  /**
   * Renews the lease every third of its time until the returned stop is called. `onLost` runs once,
   * when a renewal finds the token no longer the newest, or when renewals have failed (the store
   * unreachable) for longer than the lease lasts, by this process's monotonic clock.
   */
  keepAlive(onLost: (cause?: unknown) => void): () => void {
    let stopped = false;
    let renewedAt = performance.now();
    const lose = (cause?: unknown) => {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      onLost(cause);
    };
    const timer = setInterval(() => {
      this.renew().then(
        (held) => {
          if (held) renewedAt = performance.now();
          else lose();
        },
        (error: unknown) => {
          if (performance.now() - renewedAt > this.ttlMs) lose(error);
        },
      );
    }, Math.max(10, Math.floor(this.ttlMs / 3)));
    timer.unref();
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }

  /** Ends the lease: the next taker need not wait for it to expire, nor fence. */
  async release(): Promise<void> {
    if (this.lost) return;
    await this.store.createIfAbsent(this.key(".released"), "");
  }
}

function currentHolder(start?: string): LeaseHolder {
  const args = process.argv.slice(2).map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : JSON.stringify(arg)));
  return { host: hostname(), pid: process.pid, ...(start === undefined ? {} : { start }), command: ["semsearch", ...args].join(" ").slice(0, 200) };
}

/** Removes the records of tokens before `token` (they decide nothing once a newer one exists). */
async function prune(store: StateStore, name: string, token: number): Promise<void> {
  const folder = `leases/${name}`;
  for (const entry of await store.list(folder)) {
    const of = /^(\d{12})/.exec(entry)?.[1];
    if (of !== undefined && Number(of) < token) await store.remove(`${folder}/${entry}`);
  }
}

/** Describes a holder for a message. */
export function describeLeaseHolder(holder: LeaseHolder | null): string {
  return holder ? `process ${holder.pid} on ${holder.host} (${holder.command})` : "another process";
}

/**
 * Takes lease `name`: at once when it is free, released, expired or its holder is known dead; else
 * waits for that, up to `waitMs` (ConflictError LOCKED naming the holder). `start` marks this process
 * (owner.ts) for `holderDead` checks by others.
 */
export async function acquireLease(store: StateStore, name: string, options: LeaseOptions & { start?: string } = {}): Promise<HeldLease> {
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
  // (what readers would not believe: see readToken)
  if (!(Number.isFinite(ttlMs) && ttlMs > 0 && ttlMs <= MAX_TTL_MS)) throw new Error(`not a lease time: ${ttlMs} ms`);
  const deadline = Date.now() + (options.waitMs ?? 120_000);
  const holder = currentHolder(options.start);
  for (let delay = 10; ; delay = Math.min(delay * 2, 500)) {
    const state = await leaseState(store, name);
    const free = state === null || state.released;
    const over = !free && (state.expiresAt <= (await store.now()) || (state.holder !== null && options.holderDead?.(state.holder) === true));
    if (free || over) {
      const token = (state?.token ?? 0) + 1;
      const record: TokenRecord = { holder, ttlMs };
      // Won only if no newer token is there: a taker that paused between its look and its write can
      // create a token whose record was pruned since, behind the newest (it must not fence then).
      if ((await store.createIfAbsent(`leases/${name}/${tokenName(token)}`, JSON.stringify(record))) && (await leaseState(store, name))?.token === token) {
        await prune(store, name, token);
        return new HeldLease(store, name, token, over, ttlMs);
      }
      continue; // another taker won this token, or a newer one: look again
    }
    if (Date.now() > deadline) {
      throw new ConflictError("LOCKED", `The lease ${name} is held by ${describeLeaseHolder(state.holder)}: gave up after ${Math.round((options.waitMs ?? 120_000) / 1000)} s`, {
        hint: "Wait for the other semsearch process to finish, then try again.",
      });
    }
    await sleep(delay);
  }
}
