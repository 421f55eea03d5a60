/**
 * The check after an operation failed for no reason of the machine's: which table of the database,
 * if any, is damaged or missing (the error is damage.ts's), cheapest first. LanceDB's messages are not
 * looked at: the tables are read again, fresh. The folder and index-file steps read the local file
 * system (local-files.ts).
 */
import { inside, isRemote } from "./where.js";
import { SemsearchError } from "../errors.js";
import { damagedTablesError, type TableFault } from "./damage.js";
import { environmentFault, type Connection, type Lance } from "./lancedb.js";
import { indexFiles, tableFolderFault } from "./local-files.js";

/** The database a check reads (database.ts: Database). */
export interface CheckedDatabase {
  readonly dir: string;
  readonly connection: Connection;
  readonly lance: Lance;
  /** The tables the project's records say exist (StoreOptions.expectedTables). */
  readonly expectedTables: () => readonly string[] | Promise<readonly string[]>;
  /** Closed under a check: it finds nothing. */
  readonly closed: boolean;
}

/** What a check of a table found: nothing (null), a fault, or the machine's fault that stopped it. */
type Probe = { fault: TableFault; cause: unknown } | SemsearchError | null;

/**
 * Runs the steps of a check of table `name` of the database in `dir`. Each says, before it runs, which
 * fault its failure would be (`at`); until one does, a failure is the manifest's (the table does not
 * open). LanceDB's error is kept as the cause, never read.
 */
async function probe(dir: string, name: string, steps: (at: (fault: TableFault) => void) => Promise<TableFault | null>): Promise<Probe> {
  let current: TableFault = { step: "manifest" };
  try {
    const fault = await steps((fault) => (current = fault));
    return fault && { fault, cause: undefined };
  } catch (error) {
    if (error instanceof SemsearchError) return error;
    return environmentFault(dir, error, `reading table ${name}`) ?? { fault: current, cause: error };
  }
}

/**
 * The cheap check of a table (a few milliseconds): its folders are folders, it opens at its latest
 * version, and each of its indexes has files. Reads no data.
 */
function probeFolders(db: Connection, dir: string, name: string): Promise<Probe> {
  const tableDir = inside(dir, `${name}.lance`);
  // (an object store has no folders to check, nor can its files be listed here: the table must open)
  const local = !isRemote(dir);
  return probe(dir, name, async (at) => {
    const folder = local ? tableFolderFault(tableDir) : null;
    if (folder !== null) return folder;
    const table = await db.openTable(name);
    try {
      const indices = await table.listIndices();
      at({ step: "index files" });
      for (const { indexUuid } of indices) {
        if (local && indexUuid !== undefined && indexFiles(inside(tableDir, "_indices", indexUuid)) === 0) return { step: "index files" };
      }
    } finally {
      table.close();
    }
    return null;
  });
}

/**
 * The thorough check of a table, for when the cheap one passes: a column scanned through every data
 * file, and its full-text and vector indexes queried. Costs a read of the column and of the indexes.
 */
function probeData(db: Connection, arrow: Lance["arrow"], dir: string, name: string): Promise<Probe> {
  return probe(dir, name, async (at) => {
    const table = await db.openTable(name);
    try {
      const schema = await table.schema();
      const indices = await table.listIndices();
      at({ step: "data" });
      const first = schema.fields[0]?.name;
      if (first !== undefined) for await (const _batch of table.query().select([first])) void _batch;
      for (const index of indices) {
        const column = index.columns[0] ?? "";
        if (index.indexType === "FTS") {
          at({ step: "full-text index" });
          await table.query().fullTextSearch("semsearch", { columns: column }).select([column]).limit(1).toArray();
        }
        const field = schema.fields.find((candidate) => candidate.name === column);
        if (field && arrow.DataType.isFixedSizeList(field.type)) {
          at({ step: "vector index" });
          const vector = new Array<number>(field.type.listSize).fill(0);
          vector[0] = 1;
          await table.vectorSearch(vector).column(column).distanceType("cosine").select([column]).limit(1).toArray();
        }
      }
    } finally {
      table.close();
    }
    return null;
  });
}

/**
 * The tables the project's records list (as `read` gives them), or none when they cannot be read: a check after a failed
 * operation then looks at the tables there only (reading the records is not what failed).
 */
function recordsOrNone(read: () => readonly string[] | Promise<readonly string[]>): () => readonly string[] | Promise<readonly string[]> {
  return async () => {
    try {
      return await read();
    } catch {
      return [];
    }
  };
}

/**
 * After an operation on `touched` (null: on no table in particular; `version`: the version a
 * snapshot read) failed: whether a table of the database is damaged (CORRUPT_TABLE naming it) or
 * missing although the project says it exists; null when the failure is not the data's (a bug, or a
 * snapshot's old version cleaned up under it).
 *
 * Cheapest first, stopping at the first table found damaged: the tables the records list are there;
 * the touched table's folders, latest version and index files; whether a snapshot's version of it is
 * gone (then the failure is the cleanup's, and a search runs again on the latest); the other tables'
 * folders, versions and index files; last, the touched table's data and indexes read through (every
 * table's when the operation was on none in particular): an operation on one table reads that
 * table's files only.
 */
export async function findDamage(database: CheckedDatabase, cause: unknown, touched: string | null, version: number | undefined): Promise<SemsearchError | null> {
  const { connection, dir } = database;
  const cheap = (name: string) => probeFolders(connection, dir, name);
  const thorough = (name: string) => probeData(connection, database.lance.arrow, dir, name);
  try {
    const listed = await connection.tableNames({ limit: 1_000_000 });
    const lost = await lostTables(database, listed, recordsOrNone(database.expectedTables));
    if (lost.length > 0) return damagedTablesError(dir, lost.map((name) => ({ name, expectedBecause: "catalog.json lists it" })), cause);
    const others = listed.filter((name) => name !== touched).sort();
    if (touched === null || !listed.includes(touched)) {
      return (await firstDamaged(database, others, cheap)) ?? (touched === null ? await firstDamaged(database, others, thorough) : null);
    }
    const found = await firstDamaged(database, [touched], cheap);
    if (found) return found;
    if (version !== undefined && !(await versionReadable(database, touched, version))) return null;
    return (await firstDamaged(database, others, cheap)) ?? (await firstDamaged(database, [touched], thorough));
  } catch (error) {
    if (error instanceof SemsearchError) return error;
    if (database.closed) return null; // (closed under the check)
    return environmentFault(dir, error, "checking the tables") ?? damagedTablesError(dir, [{ name: "__manifest", fault: { step: "listing" } }], error);
  }
}

/** The error for the first of `names` a check finds damaged (and not dropped meanwhile: an index deleted), or null. */
async function firstDamaged(database: CheckedDatabase, names: readonly string[], check: (name: string) => Promise<Probe>): Promise<SemsearchError | null> {
  for (const name of names) {
    const found = await check(name);
    if (found instanceof SemsearchError) return found;
    if (found !== null && (await database.connection.tableNames({ limit: 1_000_000 })).includes(name)) return damagedTablesError(database.dir, [{ name, fault: found.fault }], found.cause);
  }
  return null;
}

/**
 * Whether table `name` still has `version` (a snapshot's), read fresh: not once the worker's cleanup
 * removed it (old versions are kept a minute), nor when it no longer reads while the latest does.
 */
async function versionReadable(database: CheckedDatabase, name: string, version: number): Promise<boolean> {
  const table = await database.connection.openTable(name);
  try {
    await table.checkout(version);
    return true;
  } catch (error) {
    const fault = environmentFault(database.dir, error, `reading table ${name}`);
    if (fault) throw fault;
    return false;
  } finally {
    table.close();
  }
}

/**
 * The tables the project's records list that the database lacks, given the tables it `listed`:
 * those not there are looked for again between two reads of the records, so a table counts as lost
 * only when the records listed it before the tables were listed and still do after. An index
 * created meanwhile has its tables before its record; one deleted loses its record first.
 * `records`: the tables the records list (by default StoreOptions.expectedTables).
 */
export async function lostTables(database: CheckedDatabase, listed: readonly string[], records = database.expectedTables): Promise<string[]> {
  const before = await records();
  if (before.every((name) => listed.includes(name))) return [];
  const again = await database.connection.tableNames({ limit: 1_000_000 });
  const still = new Set(await records());
  return before.filter((name) => still.has(name) && !again.includes(name));
}
