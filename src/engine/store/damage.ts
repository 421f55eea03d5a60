/**
 * The error for tables of the database that cannot be read: damaged (a version manifest, a data or
 * index file missing or cut short) or missing although the project's records say they exist. Not a
 * bug but the environment's fault (exit 6), and never repaired by semsearch: a damaged table is
 * neither rewritten nor dropped, so the person can restore it.
 */
import path from "node:path";
import { EnvironmentError } from "../errors.js";

/**
 * A table found unreadable or missing. `reason`: what could not be read (LanceDB's first line),
 * absent when the table is missing; `expectedBecause`: why a missing table should be there.
 */
export interface DamagedTable {
  name: string;
  reason?: string;
  expectedBecause?: string;
}

/** The index a table belongs to (`index_<id>`, `segments_<id>`, `images_<id>`), or null for the object table. */
function indexOf(table: string): string | null {
  return /^(?:index|segments|images)_(idx_[a-z0-9]+)$/.exec(table)?.[1] ?? null;
}

/** Shortens a reason to its first line and a few hundred characters. */
export function firstLine(text: string): string {
  const line = text.split("\n")[0]?.trim() ?? "";
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/** EnvironmentError CORRUPT_TABLE naming each damaged table of the database in `dataDir`, its directory and the project. */
export function damagedTablesError(dataDir: string, tables: readonly DamagedTable[], cause?: unknown): EnvironmentError {
  const project = path.dirname(dataDir);
  const where = (table: string) => path.join(dataDir, `${table}.lance`);
  const described = tables.map((table) =>
    table.reason === undefined
      ? `${table.name} is missing (${where(table.name)} is not there${table.expectedBecause ? `, while ${table.expectedBecause}` : ""})`
      : `${table.name} cannot be read (${where(table.name)}: ${table.reason})`,
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
