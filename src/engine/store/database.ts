/**
 * The open database of one project (its data folder): handles of its tables at their latest
 * versions, opened once and shared, and the one `wrap` every operation on it runs through, which
 * checks a failure for damaged tables (damage-check.ts), one check at a time per table and version.
 * `Tables` is how the operations of each kind of table (objects-table.ts, index-tables.ts…) reach
 * them: at the latest versions here, or as a snapshot pinned them (snapshot.ts).
 */
import type { SemsearchError } from "../errors.js";
import { s3Config, type S3Config } from "../state/s3-config.js";
import { findDamage, type CheckedDatabase } from "./damage-check.js";
import { loadLance, wrap, type Connection, type Lance, type Table } from "./lancedb.js";
import type { RowVectors, ScoredRows } from "./rows.js";
import type { HeldVectors } from "./vector-cache.js";

/**
 * LanceDB's object-store options for an S3 endpoint, as semsearch's own S3 client reaches it (the same
 * endpoint, region and plain-HTTP rule); credentials LanceDB reads from the environment itself.
 */
function s3StorageOptions(config: S3Config): Record<string, string> {
  return {
    aws_region: config.region,
    allow_http: String(config.allowHttp),
    ...(config.endpoint ? { aws_endpoint: config.endpoint, aws_virtual_hosted_style_request: "false" } : {}),
  };
}

/** How an operation reaches the tables of a database. */
export interface Tables {
  readonly db: Database;
  /** Table `name`: at its latest version, or at the version a snapshot pinned. */
  table(name: string): Promise<Table>;
  /** `Database.wrap`, for a failure seen at the versions `table` gives. */
  wrap<T>(table: string | null, what: string, fn: () => Promise<T>): Promise<T>;
  /** Of a snapshot: queries also return LanceDB row ids, to read the same rows again. */
  readonly snapshot?: SnapshotReads;
}

/** What only a snapshot reads (snapshot.ts). */
export interface SnapshotReads {
  /** The vectors this process holds of table `name` at the version the snapshot reads, if it holds them. */
  heldVectors(name: string): HeldVectors | undefined;
  /** The stored vectors of the first `count` of rows a query of the snapshot returned (Snapshot.vectorsOfRows). */
  vectorsOfRows(name: string, hits: ScoredRows, count?: number): Promise<RowVectors>;
}

export class Database implements CheckedDatabase {
  /** Handles of tables at their latest version (reads always see other processes' commits). */
  private readonly handles = new Map<string, Table>();
  /** Each table's latest version as last read, and when (performance.now()): see latestVersion. */
  private readonly versions = new Map<string, { version: number; at: number }>();
  /** Checks of the tables under way after a failure, by the table and version it was of (see damage). */
  private readonly damageChecks = new Map<string, Promise<SemsearchError | null>>();
  /** Tables whose vector index this process has prewarmed (see prewarmVectorIndex). */
  readonly prewarmed = new Set<string>();
  /** The tables at their latest versions. */
  readonly latest: Tables = { db: this, table: (name) => this.table(name), wrap: (table, what, fn) => this.wrap(table, what, fn) };
  private isClosed = false;
  /**
   * In a bucket project: what every commit checks first, after its table's base version is fixed
   * (the project's write lease still held; see writeTable), and the connection writes go through.
   */
  private writeGuard: (() => Promise<void>) | undefined;
  private writer: Promise<Connection> | undefined;
  private readonly writeHandles = new Map<string, Table>();

  private constructor(
    readonly dir: string,
    readonly connection: Connection,
    readonly lance: Lance,
    /** The tables the project's records say exist (StoreOptions.expectedTables). */
    readonly expectedTables: () => readonly string[] | Promise<readonly string[]>,
    /** How old latestVersion's answer may be (StoreOptions.versionMaxAgeMs). */
    private readonly versionMaxAgeMs = 0,
  ) {}

  /**
   * Opens (creating if needed) the database in `dir`, a local directory or an S3 address
   * (`s3://bucket/prefix/data`, reached as s3-config.ts reads the environment); reads always see other
   * processes' commits.
   */
  static async open(dir: string, expectedTables: () => readonly string[] | Promise<readonly string[]> = async () => [], versionMaxAgeMs = 0): Promise<Database> {
    const lance = await loadLance();
    const storageOptions = dir.startsWith("s3://") ? s3StorageOptions(s3Config(process.env)) : undefined;
    const connection = await wrap(dir, "opening the database", () => lance.lancedb.connect(dir, { readConsistencyInterval: 0, ...(storageOptions ? { storageOptions } : {}) }));
    return new Database(dir, connection, lance, expectedTables, versionMaxAgeMs);
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /**
   * Runs a LanceDB operation on `table` (null: on none in particular); a failure becomes a
   * SemsearchError: the machine's fault (a full disk…), a damaged table (EnvironmentError
   * CORRUPT_TABLE, see damage), else InternalError STORAGE_ERROR. `pinned`: the versions a snapshot
   * reads, by table.
   */
  wrap<T>(table: string | null, what: string, fn: () => Promise<T>, pinned?: ReadonlyMap<string, number>): Promise<T> {
    return wrap(this.dir, what, fn, (error) => this.damage(error, table, table === null ? undefined : pinned?.get(table)));
  }

  /**
   * After an operation on `touched` (at `version`, a snapshot's) failed for no reason of the
   * machine's: the damaged or missing table it finds (findDamage), or null. Concurrent failures of
   * one table and version share one check.
   */
  private damage(cause: unknown, touched: string | null, version: number | undefined): Promise<SemsearchError | null> {
    if (this.isClosed) return Promise.resolve(null);
    const key = JSON.stringify([touched, version ?? null]);
    let check = this.damageChecks.get(key);
    if (!check) {
      check = findDamage(this, cause, touched, version).finally(() => this.damageChecks.delete(key));
      this.damageChecks.set(key, check);
    }
    return check;
  }

  /**
   * Reads every table through (a column of each data file, each full-text and vector index) and the
   * project's tables are all there: the damaged or missing table found (CORRUPT_TABLE), or null.
   */
  checkTables(): Promise<SemsearchError | null> {
    return findDamage(this, undefined, null, undefined);
  }

  /** Table `name` at its latest version (one handle, opened at its first use). */
  async table(name: string): Promise<Table> {
    let table = this.handles.get(name);
    if (!table) {
      table = await this.wrap(name, `opening table ${name}`, () => this.connection.openTable(name));
      this.handles.set(name, table);
    }
    return table;
  }

  /**
   * The latest version of table `name`, which a snapshot pins. Read from the store each time (in a
   * bucket, a listing of the table's versions), unless reads may be `versionMaxAgeMs` old (a bucket
   * project's server): then as read less than that ago, or the version this process's own last commit
   * made if that is later (a write it answered is seen by its next search at once).
   */
  async latestVersion(name: string): Promise<number> {
    // (only where commits go through handles of their own, which say what they committed: a bucket's)
    const maxAge = this.writeGuard === undefined ? 0 : this.versionMaxAgeMs;
    const own = this.writeHandles.get(name);
    const committed = own ? await own.version().catch(() => -1) : -1; // (a handle that never refreshes itself: no request)
    const known = this.versions.get(name);
    if (known !== undefined && performance.now() - known.at < maxAge) return Math.max(known.version, committed);
    const version = await this.wrap(name, `reading the version of ${name}`, async () => (await this.table(name)).version());
    if (maxAge > 0) this.versions.set(name, { version, at: performance.now() });
    return Math.max(version, committed);
  }

  /**
   * Table `name` for a commit. In a local project, the shared handle (only one process writes, by the
   * write lock). In a bucket project, where a writer that paused past its lease may resume while
   * another holds it: a handle of a connection that does not refresh itself, moved to the latest
   * version here (fixing the commit's base), then the write guard checks the lease. A takeover fences
   * by a Restore after that base, which Lance then refuses to commit over (docs/design/object-storage.md).
   */
  async writeTable(name: string): Promise<Table> {
    if (this.writeGuard === undefined) return this.table(name);
    const connection = await this.writeConnection();
    let table = this.writeHandles.get(name);
    if (!table) {
      const opened = await this.wrap(name, `opening table ${name}`, () => connection.openTable(name));
      this.writeHandles.set(name, opened);
      table = opened;
    }
    const handle = table;
    await this.wrap(name, `reading the latest version of ${name}`, () => handle.checkoutLatest());
    await this.writeGuard();
    return handle;
  }

  /** Checks the write guard before a commit that needs no table handle (a table created). */
  async checkWrite(): Promise<void> {
    await this.writeGuard?.();
  }

  /** Makes every commit check `guard` first, through handles that never refresh themselves (see writeTable). */
  guardWrites(guard: () => Promise<void>): void {
    this.writeGuard = guard;
  }

  private writeConnection(): Promise<Connection> {
    this.writer ??= wrap(this.dir, "opening the database", () =>
      this.lance.lancedb.connect(this.dir, this.dir.startsWith("s3://") ? { storageOptions: s3StorageOptions(s3Config(process.env)) } : {}),
    );
    return this.writer;
  }

  /** Whether a handle of table `name` is open already (then the table exists). */
  isOpen(name: string): boolean {
    return this.handles.has(name);
  }

  /** Keeps the handle of a table just created. */
  keep(name: string, table: Table): void {
    this.handles.set(name, table);
  }

  async tableNames(): Promise<string[]> {
    return this.wrap(null, "listing tables", () => this.connection.tableNames({ limit: 1_000_000 }));
  }

  async hasTable(name: string): Promise<boolean> {
    return (await this.tableNames()).includes(name);
  }

  /** Drops a table, if it is there. */
  async dropTable(name: string): Promise<void> {
    await this.checkWrite();
    this.handles.delete(name);
    this.versions.delete(name);
    this.writeHandles.delete(name);
    if (await this.hasTable(name)) await this.wrap(name, `dropping table ${name}`, () => this.connection.dropTable(name));
  }

  /**
   * Fences tables `names` for a lease taken over (state/lease.ts; docs/design/object-storage.md): a
   * Restore of each one's latest version, which changes no row but makes Lance refuse every commit
   * based on an earlier version (a holder that paused past its lease). A commit that lands between
   * the read of the latest version and the Restore is erased: the lease protocol makes it one its
   * writer never acknowledged.
   */
  async fence(names: readonly string[]): Promise<void> {
    for (const name of names) {
      await this.wrap(name, `fencing table ${name}`, async () => {
        const table = await this.connection.openTable(name);
        try {
          await table.checkout(await table.version());
          await table.restore();
        } finally {
          table.close();
        }
      });
    }
  }

  close(): void {
    this.isClosed = true;
    this.handles.clear();
    this.writeHandles.clear();
    this.connection.close();
    void this.writer?.then((writer) => writer.close()).catch(() => {});
  }
}
