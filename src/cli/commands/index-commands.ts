/** `semsearch index create | list | get | status | delete`. */
import type { IndexInfo } from "../../engine/index.js";
import { checkNoMix, indexBodyFromFlags, type IndexCreateFlags } from "../index-body.js";
import { isBucketAddress, parseJsonText, UsageError } from "../../engine/index.js";
import path from "node:path";
import { projectDir, withEngine, readInput, type GlobalOptions } from "../options.js";
import { withReader } from "../reader.js";
import { listFormat, printResult } from "../output.js";
import { downloadProgressReporter } from "../progress.js";
import { waitForBuild, type WaitFlags } from "../wait.js";
import { renderIndexTable, statusCounts } from "../render/table.js";

export interface IndexCreateOptions extends GlobalOptions, IndexCreateFlags, WaitFlags {
  config?: string;
  name?: string;
}

/** The body with `--name` added: it names the index whether the configuration comes from flags or --config. */
function withName(body: unknown, name: string | undefined): unknown {
  if (name === undefined) return body;
  if (typeof body === "object" && body !== null && !Array.isArray(body)) {
    if (Object.hasOwn(body, "name")) throw new UsageError("CONFLICTING_OPTIONS", "The --config body has a name already: give the name there or with --name, not both");
    return { name, ...body };
  }
  return body;
}

/** Largest --config file read: a create-index body over HTTP is at most 1 MiB too. */
const MAX_CONFIG_FILE_BYTES = 1024 * 1024;

export async function indexCreate(options: IndexCreateOptions): Promise<void> {
  checkNoMix(options, options.config);
  let body: unknown;
  if (options.config !== undefined) {
    const input = await readInput(options.config, "--config", MAX_CONFIG_FILE_BYTES);
    body = parseJsonText(input.text, input.source);
  } else {
    body = indexBodyFromFlags(options);
  }
  await withEngine(options, async (engine) => {
    const download = downloadProgressReporter(options.json, "downloading the model");
    let created: { id: string };
    try {
      created = await engine.createIndex(withName(body, options.name), { onModelDownload: (progress) => download.update(progress) });
    } finally {
      download.done();
    }
    const { id } = created;
    // The index exists now: its id is printed at once, also when a wait follows (and gives up).
    printResult(options, { id }, () => `${id}\n`);
    if (options.wait) await waitForBuild(engine, id, options);
  });
}

/** A project as people are shown it: a local one by its absolute path. */
function shownProject(dir: string): string {
  return isBucketAddress(dir) ? dir : path.resolve(dir);
}

export async function indexList(options: GlobalOptions): Promise<void> {
  await withReader(options, async (reader) => {
    const indexes = await reader.listIndexes();
    printResult(options, { indexes }, () => renderIndexTable(indexes, shownProject(projectDir(options)), listFormat(options)));
  });
}

function modelLine(index: IndexInfo): string {
  const spec = index.embedding;
  if (!spec) return `${index.model} (${index.dimension}-d, bundled)`;
  const parts = [`${spec.dimension}-d`, spec.dtype, `${spec.pooling} pooling`, `window ${spec.window}`, spec.source === "hub" ? `revision ${spec.revision?.slice(0, 12)}` : "local folder"];
  return `${index.model} (${parts.filter(Boolean).join(", ")})`;
}

function describe(index: IndexInfo): string {
  const { status } = index;
  return [
    `id:        ${index.id}`,
    ...(index.name ? [`name:      ${index.name}`] : []),
    `type:      ${index.configuration.index_type.name} (${index.configuration.index_type.neural_only ? "neural only" : "hybrid"})`,
    `model:     ${modelLine(index)}`,
    `state:     ${index.state}`,
    `objects:   ${status.READY} ready, ${status.PROCESSING} processing, ${status.UPLOADED} uploaded, ${status.ERROR} error`,
    `created:   ${index.created_at}`,
    `config:    ${JSON.stringify(index.configuration)}`,
  ].join("\n") + "\n";
}

/** An index as it is now (read by a running server when one answers), or once built with --wait. */
function readIndex(id: string, options: GlobalOptions & WaitFlags): Promise<IndexInfo> {
  if (options.wait) return withEngine(options, (engine) => waitForBuild(engine, id, options));
  return withReader(options, (reader) => reader.getIndex(id));
}

export async function indexGet(id: string, options: GlobalOptions & WaitFlags): Promise<void> {
  const index = await readIndex(id, options);
  printResult(options, index, () => describe(index));
}

export async function indexStatus(id: string, options: GlobalOptions & WaitFlags): Promise<void> {
  const { status } = await readIndex(id, options);
  printResult(options, { status }, () => `${statusCounts(status)}\n`);
}

export async function indexDelete(id: string, options: GlobalOptions): Promise<void> {
  await withEngine(options, async (engine) => {
    const deleted = await engine.deleteIndex(id);
    printResult(options, { deleted }, () => `Deleted index ${deleted}${deleted === id ? "" : ` (${id})`}.\n`);
  });
}
