/** Index operations: create, list, get, status, delete (waiting for a build: build.ts). */
import { isImageIndex, isNeuralOnly, parseCreateIndexBody, type IndexConfiguration } from "./config.js";
import { fieldPaths, listFieldsMessage, missingFieldsMessage, namedFields } from "./field-presence.js";
import type { EngineContext } from "./context.js";
import { DEFAULT_IMAGE_MODEL, DEFAULT_MODEL } from "./embedding/registry.js";
import type { DownloadProgress } from "./embedding/hub.js";
import { ConflictError, NotFoundError, ValidationError } from "./errors.js";
import { failpoint } from "./failpoint.js";
import { finishIndexWork } from "./journals.js";
import { newIndexId } from "./ids.js";
import { DEFAULT_TOKENIZER, resolveTokenizer } from "./tokenizer.js";
import { TEXT_NORMALIZATION } from "./text-form.js";
import { startWorker } from "./indexing/spawn.js";
import { currentOwner } from "./owner.js";
import { imageTableName, indexTables, indexTableName, namedIndex, partTables, segmentTableName } from "./project.js";
import { indexCounts, type IndexCounts } from "./status.js";
import type { IndexInfo, IndexRecord, JsonObject } from "./types.js";

export interface CreateIndexOptions {
  /** Progress of downloading the index's model, when it is not in the models folder yet. */
  onModelDownload?: (progress: DownloadProgress) => void;
  /** false: the configuration may not name a model folder (a client of the HTTP server naming the server's files). Default true. */
  modelFolders?: boolean;
}

/**
 * Creates an index from a create-index request body and starts building it in the background. A
 * Hugging Face model not downloaded yet is downloaded first (the worker never downloads); if that
 * fails, nothing is created.
 */
export async function createIndex(ctx: EngineContext, body: unknown, now: Date, options: CreateIndexOptions = {}): Promise<{ id: string }> {
  const { configuration, name } = parseCreateIndexBody(body);
  const image = isImageIndex(configuration);
  // The model code (hub downloads, model checks) is loaded by index creation only, not by listing.
  const { checkModelRuns, resolveModelSpec } = await import("./models.js");
  const spec = await resolveModelSpec(configuration.model ?? (image ? DEFAULT_IMAGE_MODEL : DEFAULT_MODEL), {
    ...(configuration.model_dtype ? { dtype: configuration.model_dtype } : {}),
    download: true,
    onProgress: options.onModelDownload,
    warn: ctx.warn,
    folders: options.modelFolders,
  });
  if (image !== (spec.kind === "clip")) {
    throw new ValidationError("MODEL_UNSUPPORTED", image ? `Image indexes need an image-text (CLIP) model, and ${spec.id} is a text model` : `${spec.id} is an image-text (CLIP) model: it is for image indexes (--type image)`, {
      hint: image ? `Leave --model out for ${DEFAULT_IMAGE_MODEL}, or give a CLIP model (an id or a folder with onnx/text_model.onnx and onnx/vision_model.onnx).` : "Use a text embedding model for text indexes, or create an image index.",
      issues: [{ path: "configuration.model", message: image ? "not an image-text model" : "an image-text model" }],
    });
  }
  const model = await checkModelRuns(spec);
  const record: IndexRecord = {
    id: newIndexId(),
    ...(name === undefined ? {} : { name }),
    configuration,
    model: model.id,
    dimension: model.dimension,
    ...(model.source === "bundled" ? {} : { embedding: model }),
    ...(isNeuralOnly(configuration) ? {} : { tokenizer: resolveTokenizer(configuration.tokenizer) }),
    normalization: TEXT_NORMALIZATION,
    created_at: now.toISOString(),
  };
  const store = await ctx.store();
  // Read first: a store that cannot be read (a damaged object table) fails the create before it writes.
  // (both checks look at the fields the configuration names: without any, nothing is read)
  const sample = namedFields(configuration).length === 0 ? [] : (await store.sampleObjects(FIELD_SAMPLE)).map((row) => JSON.parse(row.body) as JsonObject);
  const missing = await missingFieldsWarning(ctx, configuration, sample);
  const lists = listFieldsMessage(configuration, sample);
  await ctx.locked(async () => {
    if (name !== undefined && (await ctx.project.indexes()).some((index) => index.name === name)) {
      throw new ConflictError("INDEX_NAME_TAKEN", `An index named "${name}" exists already`, {
        hint: "Index names are unique: choose another, or delete the other index first.",
      });
    }
    // The journal names the tables before they exist: a create that does not finish is undone from it.
    await ctx.project.beginIndexWork({ ...currentOwner(), op: "create", id: record.id, tables: indexTables(record) });
    try {
      const tokenizer = record.tokenizer ?? DEFAULT_TOKENIZER;
      await store.createIndexTable(indexTableName(record.id), record.dimension, tokenizer);
      for (const table of partTables(record)) await store.createSegmentTable(table, record.dimension, table === imageTableName(record.id) ? null : tokenizer);
      failpoint("index-create:tables");
      await ctx.project.saveIndexes([...(await ctx.project.indexes()), record]);
      failpoint("index-create:catalog");
      await ctx.project.endIndexWork();
    } catch (error) {
      // (if undoing fails too, the journal stays, and the next writer undoes it)
      await finishIndexWork(ctx.project, store).catch(() => {});
      throw error;
    }
  });
  await startWorker(ctx);
  if (missing) ctx.warn({ code: "FIELD_NOT_FOUND", message: missing });
  if (lists) ctx.warn({ code: "FILTER_FIELD_LISTS", message: lists });
  return { id: record.id };
}

/** Objects sampled to check that the fields a configuration names exist. */
export const FIELD_SAMPLE = 1000;

/** A warning naming fields of the configuration that no sampled stored object has (likely typos), or null. */
export async function missingFieldsWarning(ctx: EngineContext, configuration: IndexConfiguration, sampled?: readonly JsonObject[]): Promise<string | null> {
  if (namedFields(configuration).length === 0) return null;
  const store = await ctx.store();
  const sample = sampled ?? (await store.sampleObjects(FIELD_SAMPLE)).map((row) => JSON.parse(row.body) as JsonObject);
  const found = new Map<string, number>();
  for (const object of sample) fieldPaths(object, found);
  return missingFieldsMessage(configuration, found, sample.length, sample.length < FIELD_SAMPLE ? sample.length : await store.countObjects());
}

/** The catalog entry of an index, by id or name; NotFoundError INDEX_NOT_FOUND otherwise. */
export async function findIndex(ctx: EngineContext, id: string): Promise<IndexRecord> {
  const indexes = await ctx.project.indexes();
  const index = namedIndex(indexes, id);
  if (!index) {
    const known = indexes.map((candidate) => candidate.name ?? candidate.id);
    throw new NotFoundError("INDEX_NOT_FOUND", `Index "${id}" not found`, {
      hint: known.length ? `Known indexes: ${known.join(", ")}` : "This project has no indexes yet: `semsearch index create`.",
    });
  }
  return index;
}

/** BUILDING while objects are UPLOADED or PROCESSING, and while the worker takes READY ones into the built indexes. */
function isBuilding({ status, optimizing }: IndexCounts): boolean {
  return status.UPLOADED + status.PROCESSING > 0 || optimizing;
}

export async function describeIndex(ctx: EngineContext, index: IndexRecord): Promise<IndexInfo> {
  const counts = await indexCounts(ctx, index);
  const blocked = (await ctx.project.progress(index.id)).blocked;
  return { ...index, state: isBuilding(counts) ? "BUILDING" : "READY", status: counts.status, ...(blocked ? { blocked: { code: blocked.code, message: blocked.message } } : {}) };
}

export async function listIndexes(ctx: EngineContext): Promise<IndexInfo[]> {
  if (!(await ctx.project.exists())) return [];
  await ctx.store(); // (opening it finishes interrupted work first, such as an index delete, before the catalog is read)
  return Promise.all((await ctx.project.indexes()).map((index) => describeIndex(ctx, index)));
}

export async function deleteIndex(ctx: EngineContext, idOrName: string): Promise<string> {
  const { id } = await findIndex(ctx, idOrName);
  // Every table the index may have (those it does not have are skipped when dropped).
  const journal = { ...currentOwner(), op: "delete" as const, id, tables: [indexTableName(id), segmentTableName(id), imageTableName(id)] };
  const record = async () => {
    await findIndex(ctx, id); // (deleted meanwhile: not found)
    await ctx.project.beginIndexWork(journal);
    failpoint("index-delete:journal");
  };
  // The journal is written before the store is opened: opening finishes interrupted work, index work
  // first, so this delete goes through even when another (a delete of objects, which reaches every
  // index) cannot finish because this index's tables are damaged. Only while another index's work is
  // pending is it written later, once that work is finished.
  const recorded = await ctx.project.locked(async () => {
    if ((await ctx.project.unfinishedIndexWork()) !== null) return false;
    await record();
    return true;
  });
  const store = await ctx.store();
  await ctx.locked(async () => {
    // Taking the lock finishes every journal left (journals.ts), this one too once recorded: that is the delete.
    if (recorded) return;
    await record();
    await finishIndexWork(ctx.project, store);
  });
  return id;
}

