/**
 * The error for tables of the database that cannot be read: damaged (a version manifest, a data or
 * index file missing or cut short) or missing although the project's records say they exist. Not a
 * bug but the environment's fault (exit 6), and never repaired by semsearch: a damaged table is
 * neither rewritten nor dropped, so the person can restore it.
 */
import { inside, parentOf } from "./where.js";
import { EnvironmentError } from "../errors.js";

/**
 * The step of a table's check that failed, which is all a message says of the damage: LanceDB's text
 * (which may quote the files' content) stays in the error's cause, never shown.
 * - `folder`: a folder of the table's directory (`_versions`, `data`…) is a file or anything else;
 * - `manifest`: the table does not open at its latest version (its version manifest);
 * - `index files`: the folder of one of its indexes is missing or empty;
 * - `data`: a scan of a column failed (a data file missing or cut short);
 * - `full-text index`, `vector index`: a query of that index failed;
 * - `listing`: the database cannot list its tables.
 */
export type TableFault =
  | { step: "folder"; folder: string }
  | { step: "manifest" | "index files" | "data" | "full-text index" | "vector index" | "listing" };

/** A table found unreadable (`fault`) or missing (`expectedBecause`: why it should be there). */
export interface DamagedTable {
  name: string;
  fault?: TableFault;
  expectedBecause?: string;
}

/** The index a table belongs to (`index_<id>`, `segments_<id>`, `images_<id>`), or null for the object table. */
function indexOf(table: string): string | null {
  return /^(?:index|segments|images)_(idx_[a-z0-9]+)$/.exec(table)?.[1] ?? null;
}

/** What was found wrong with the table in `dir` (its directory), and where. */
function describeFault(fault: TableFault, dir: string): string {
  switch (fault.step) {
    case "folder":
      return `${fault.folder} is not a folder (${inside(dir, fault.folder)})`;
    case "manifest":
      return `its latest version manifest is missing or unreadable (${inside(dir, "_versions")})`;
    case "index files":
      return `the files of one of its indexes are missing (${inside(dir, "_indices")})`;
    case "data":
      return `a data file is missing or unreadable (a scan of its rows failed, in ${inside(dir, "data")})`;
    case "full-text index":
    case "vector index":
      return `its ${fault.step} is unreadable (a query of it failed, in ${inside(dir, "_indices")})`;
    case "listing":
      return `the database cannot list its tables (${parentOf(dir)})`;
  }
}

/**
 * EnvironmentError CORRUPT_TABLE naming each damaged table of the database in `dataDir`, its directory
 * and the project, and what was found wrong; `cause` (LanceDB's error) is kept but not shown.
 */
export function damagedTablesError(dataDir: string, tables: readonly DamagedTable[], cause?: unknown): EnvironmentError {
  const project = parentOf(dataDir);
  const where = (table: string) => inside(dataDir, `${table}.lance`);
  const described = tables.map((table) =>
    table.fault === undefined
      ? `${table.name} is missing (${where(table.name)} is not there${table.expectedBecause ? `, while ${table.expectedBecause}` : ""})`
      : `${table.name} cannot be read: ${describeFault(table.fault, where(table.name))}`,
  );
  const message = `The project ${project} is damaged: its table ${described.join("; its table ")}`;
  const indexes = [...new Set(tables.map((table) => indexOf(table.name)).filter((id): id is string => id !== null))];
  const objects = tables.some((table) => indexOf(table.name) === null);
  const ways = [
    ...(objects ? [`restore ${where("objects")} (or the whole project directory) from a backup: the objects are stored nowhere else`] : []),
    ...indexes.map((id) => `rebuild index ${id} from the objects (\`semsearch index delete ${id}\`, then create it again), or restore its tables from a backup`),
  ];
  return new EnvironmentError("CORRUPT_TABLE", message, {
    hint: `semsearch does not repair, rewrite or drop a damaged table. To recover: ${ways.join("; ")}.`,
    cause,
  });
}
