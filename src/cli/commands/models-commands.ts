/** `semsearch models list | pull | rm`: the embedding models on this machine. */
import type { ModelListEntry } from "../../engine/index.js";
import { modelsDir, ValidationError } from "../../engine/index.js";
import { withEngine, type GlobalOptions } from "../options.js";
import { listFormat, printResult } from "../output.js";
import { downloadProgressReporter, formatBytes } from "../progress.js";
import { newTable, type ListFormat } from "../render/table.js";
import { tsv } from "../render/tsv.js";
import { chalk } from "../render/style.js";

function renderModels(models: ModelListEntry[], format: ListFormat): string {
  const head = ["model", "status", "dtype", "size", "used by", "about"];
  const rows = models.map((model) => {
    const bytes = model.downloads.reduce((sum, download) => sum + download.bytes, 0);
    const dtypes = [...new Set(model.downloads.flatMap((download) => download.dtypes))];
    const status = model.status === "known" ? "not downloaded" : model.status;
    return [model.id, status, dtypes.join(", "), format === "tsv" ? bytes : bytes ? formatBytes(bytes) : "", model.used_by.join(", "), model.description];
  });
  if (format === "tsv") return tsv(head, rows);
  const table = newTable(head);
  for (const row of rows) table.push(row.map((value, i) => (i === 1 && value === "not downloaded" ? chalk.dim(value) : String(value))));
  return `${table.toString()}\nmodels folder: ${modelsDir()}\n`;
}

export async function modelsList(options: GlobalOptions): Promise<void> {
  await withEngine(options, async (engine) => {
    const models = await engine.listModels();
    printResult(options, { models, models_dir: modelsDir() }, () => renderModels(models, listFormat(options)));
  });
}

export interface ModelsPullOptions extends GlobalOptions {
  dtype?: string;
  revision?: string;
}

/** The same rule as the body's `model_dtype`: a value outside q8/fp32 is a validation error (exit 4). */
function dtypeOf(value: string | undefined): "q8" | "fp32" | undefined {
  if (value === undefined || value === "q8" || value === "fp32") return value;
  throw new ValidationError("INVALID_DTYPE", `--dtype must be q8 or fp32, not ${JSON.stringify(value)}`, { issues: [{ path: "--dtype", message: "q8 or fp32" }] });
}

export async function modelsPull(id: string, options: ModelsPullOptions): Promise<void> {
  const dtype = dtypeOf(options.dtype);
  await withEngine(options, async (engine) => {
    const progress = downloadProgressReporter(options.json, id);
    try {
      const pulled = await engine.pullModel(id, { ...(dtype ? { dtype } : {}), ...(options.revision !== undefined ? { revision: options.revision } : {}), onProgress: (p) => progress.update(p) });
      progress.done();
      printResult(options, pulled, () => `${pulled.id} (${pulled.dtype}, revision ${pulled.revision.slice(0, 12)}): ${formatBytes(pulled.bytes)} in ${pulled.path}\n`);
    } finally {
      progress.done();
    }
  });
}

export interface ModelsRmOptions extends GlobalOptions {
  force?: boolean;
}

export async function modelsRm(id: string, options: ModelsRmOptions): Promise<void> {
  await withEngine(options, async (engine) => {
    const removed = await engine.removeModel(id, options.force === true);
    printResult(options, removed, () => `removed ${removed.id} (${formatBytes(removed.bytes)})\n`);
  });
}
