/** `semsearch objects add | get | list | delete`. */
import { UsageError, type ObjectsInput } from "../../engine/index.js";
import { objectsInput, withEngine, type GlobalOptions } from "../options.js";
import { withReader } from "../reader.js";
import { note, printResult } from "../output.js";
import { addProgressReporter } from "../progress.js";
import { waitForBuild, type WaitFlags } from "../wait.js";
import { renderObjectTable } from "../render/table.js";

export interface ObjectsAddOptions extends GlobalOptions, WaitFlags {
  idField?: string;
}

async function readInputs(files: string[]): Promise<ObjectsInput[]> {
  if (files.length > 0) return Promise.all(files.map(objectsInput));
  if (process.stdin.isTTY) {
    throw new UsageError("NO_INPUT", "No input: give JSON files, or pipe JSON / JSON Lines on standard input (or use -)");
  }
  return [{ stream: process.stdin, source: "<stdin>" }];
}

export async function objectsAdd(files: string[], options: ObjectsAddOptions): Promise<void> {
  const inputs = await readInputs(files);
  await withEngine(options, async (engine) => {
    const progress = addProgressReporter(options.json);
    let result: Awaited<ReturnType<typeof engine.addObjects>>;
    try {
      result = await engine.addObjects(inputs, { idField: options.idField, onProgress: (p) => progress.update(p) });
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
    printResult(options, { objects }, () => renderObjectTable(objects));
  });
}

export async function objectsDelete(id: string, options: GlobalOptions): Promise<void> {
  await withEngine(options, async (engine) => {
    await engine.deleteObject(id);
    printResult(options, { deleted: id }, () => `Deleted object ${id}.\n`);
  });
}
