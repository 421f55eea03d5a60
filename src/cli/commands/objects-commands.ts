/** `semsearch objects add | get | list | delete`. */
import { stat } from "node:fs/promises";
import path from "node:path";
import { idLines, readsAsDocument, UsageError, type ObjectsInput } from "../../engine/index.js";
import { fileFlagsGiven, filesAdd, type FilesAddOptions } from "./files-commands.js";
import { objectsInput, withEngine, type GlobalOptions } from "../options.js";
import { withReader } from "../reader.js";
import { listFormat, note, printResult } from "../output.js";
import { confirmed } from "../prompts.js";
import { printable } from "../render/style.js";
import { addProgressReporter } from "../progress.js";
import { waitForBuild, type WaitFlags } from "../wait.js";
import { renderObjectTable } from "../render/table.js";

export interface ObjectsAddOptions extends GlobalOptions, WaitFlags {
  idField?: string;
  generateIds?: boolean;
  inputFormat?: "json" | "csv" | "tsv";
}

/** Whether an argument of `objects add` is a folder or a document (read as files), rather than JSON or CSV input. */
async function readsAsFiles(file: string, textExtensions: readonly string[]): Promise<boolean> {
  if (file === "-") return false;
  if (readsAsDocument(file, textExtensions)) return true;
  return stat(file).then(
    (info) => info.isDirectory(),
    () => false,
  );
}

async function readInputs(files: string[]): Promise<ObjectsInput[]> {
  if (files.length > 0) return Promise.all(files.map(objectsInput));
  if (process.stdin.isTTY) {
    throw new UsageError("NO_INPUT", "No input: give JSON files, or pipe JSON / JSON Lines on standard input (or use -)");
  }
  return [{ stream: process.stdin, source: "<stdin>" }];
}

export async function objectsAdd(files: string[], options: ObjectsAddOptions & FilesAddOptions): Promise<void> {
  if (fileFlagsGiven(options) || (await Promise.all(files.map((file) => readsAsFiles(file, options.ext ?? [])))).some(Boolean)) return filesAdd(files, options);
  const format = options.inputFormat;
  const inputs = (await readInputs(files)).map((input) => (format ? { ...input, format } : input));
  await withEngine(options, async (engine) => {
    const progress = addProgressReporter(options.json);
    let result: Awaited<ReturnType<typeof engine.addObjects>>;
    try {
      result = await engine.addObjects(inputs, { idField: options.idField, generateIds: options.generateIds === true, onProgress: (p) => progress.update(p) });
    } finally {
      progress.done();
    }
    // The objects are committed: say so before waiting, so a wait that gives up still reports them (and their generated ids).
    printResult(options, result, () => `Added ${result.count} object${result.count === 1 ? "" : "s"}.\n`);
    if (options.wait) for (const index of await engine.listIndexes()) await waitForBuild(engine, index.id, options);
    else if ((await engine.listIndexes()).length > 0) note(options, "Indexing continues in the background.");
  });
}

export async function objectsGet(id: string, options: GlobalOptions): Promise<void> {
  await withReader(options, async (reader) => {
    const info = await reader.getObject(id);
    printResult(options, info, () => {
      const states = info.status.indexes.map((entry) => `${entry.id}: ${entry.status}${entry.searchable ? " (searchable)" : ""}${entry.error ? ` — ${entry.error}` : ""}`);
      return `${JSON.stringify(info.object, null, 2)}\nid: ${info.id} · created ${info.created_at} · updated ${info.updated_at}\nstatus: ${info.status.state}${states.length ? `\n  ${states.join("\n  ")}` : ""}\n`;
    });
  });
}

export async function objectsList(options: GlobalOptions & { limit?: number; offset?: number }): Promise<void> {
  await withReader(options, async (reader) => {
    const objects = await reader.listObjects(options.offset ?? 0, options.limit ?? 100);
    printResult(options, { objects }, () => renderObjectTable(objects, listFormat(options)));
  });
}

export interface ObjectsDeleteOptions extends GlobalOptions {
  filter?: string;
  path?: string[];
  index?: string;
  yes?: boolean;
}

/** Ids one per line from standard input, decoded strictly (engine idLines: a byte that is not UTF-8 is refused with its line). */
async function idsFromStdin(): Promise<string[]> {
  if (process.stdin.isTTY) throw new UsageError("NO_INPUT", "Reading ids from standard input, but it is a terminal: pipe them in, one per line");
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  // (decoded once, whole: a character split between two chunks is still one character)
  return idLines(Buffer.concat(chunks), "<stdin>");
}

/**
 * `objects delete <id…> | - | --filter '…'`: all the objects named, or none. A filter's matches are
 * shown and asked about in a terminal; elsewhere (a script) `--yes` must say so.
 */
export async function objectsDelete(ids: string[], options: ObjectsDeleteOptions): Promise<void> {
  const fromStdin = ids.includes("-");
  if (options.path !== undefined) {
    if (ids.length > 0 || options.filter !== undefined) throw new UsageError("DELETE_PATH_AND_IDS", "Give --path, ids or --filter: one of them");
    const paths = options.path.map((given) => path.resolve(given));
    await withEngine(options, async (engine) => {
      const deleted = await engine.deletePaths(paths);
      printResult(options, { count: deleted.length, deleted }, () => `Deleted ${deleted.length} object${deleted.length === 1 ? "" : "s"}.\n`);
    });
    return;
  }
  if (options.filter !== undefined && ids.length > 0) throw new UsageError("DELETE_IDS_AND_FILTER", "Give ids or --filter, not both");
  if (options.filter === undefined && ids.length === 0) throw new UsageError("NO_IDS", "Name the objects to delete: ids as arguments, - to read them from standard input (one per line), or --filter with --index");
  if (options.index !== undefined && options.filter === undefined) throw new UsageError("INDEX_WITHOUT_FILTER", "--index names the index whose fields --filter reads: give --filter too");
  const named = fromStdin ? [...ids.filter((id) => id !== "-"), ...(await idsFromStdin())] : ids;
  await withEngine(options, async (engine) => {
    let targets = named;
    if (options.filter !== undefined) {
      const index = options.index ?? (await onlyIndex(engine));
      targets = await engine.objectsMatching(index, options.filter);
      if (targets.length === 0) {
        printResult(options, { count: 0, deleted: [] }, () => "No object matches the filter: nothing deleted.\n");
        return;
      }
      if (!options.yes) {
        if (options.json || !process.stdin.isTTY || !process.stderr.isTTY) {
          throw new UsageError("CONFIRMATION_NEEDED", `The filter matches ${targets.length} object${targets.length === 1 ? "" : "s"}: add --yes to delete ${targets.length === 1 ? "it" : "them"} (there is no terminal to ask in)`);
        }
        const sample = printable(targets.slice(0, 5).join(", ") + (targets.length > 5 ? ", …" : ""));
        if ((await confirmed(`Delete ${targets.length} object${targets.length === 1 ? "" : "s"} (${sample})?`)) !== true) {
          note(options, "Nothing deleted.");
          return;
        }
      }
    }
    const deleted = await engine.deleteObjects(targets);
    if (ids.length === 1 && !fromStdin) {
      // (one id: the shape it always had)
      printResult(options, { deleted: deleted[0] }, () => `Deleted object ${printable(deleted[0] as string)}.\n`);
      return;
    }
    printResult(options, { count: deleted.length, deleted }, () => `Deleted ${deleted.length} object${deleted.length === 1 ? "" : "s"}.\n`);
  });
}

/** The project's one index, for a filter that names none. */
async function onlyIndex(engine: { listIndexes(): Promise<{ id: string }[]> }): Promise<string> {
  const indexes = await engine.listIndexes();
  if (indexes.length === 1) return (indexes[0] as { id: string }).id;
  throw new UsageError("INDEX_NEEDED", indexes.length === 0 ? "--filter reads an index's filterable fields, and the project has no index" : `--filter reads an index's filterable fields: name one of the ${indexes.length} indexes with --index`);
}
