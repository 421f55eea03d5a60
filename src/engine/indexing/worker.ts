/**
 * The background indexer. One per project (worker.lock); started detached by any command
 * that leaves work pending, it embeds pending objects into every index, commits them
 * under the project write lock, folds them into the built indexes, and exits when idle.
 *
 * Pending work is derived from stored state alone (objects with seq above an index's
 * indexedSeq), so a worker killed at any moment is simply restarted and resumes; rows are
 * upserted by object id, so reprocessing a batch indexes nothing twice.
 */
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { isImageIndex } from "../config.js";
import { embedObjectImages } from "./images.js";
import { bucketImageBase, imageBase } from "../images/reference.js";
import { createEmbeddingPool, type EmbeddingPool } from "../embedding/pool.js";
import { indexModel } from "../embedding/registry.js";
import { MODEL_UNAVAILABLE } from "../embedding/model-cache.js";
import { ConflictError, EnvironmentError, SemsearchError, ValidationError } from "../errors.js";
import type { EngineContext } from "../context.js";
import { failpoint } from "../failpoint.js";
import { hasPendingWork } from "./spawn.js";
import type { Claim } from "../project-locks.js";
import { imageTableName, indexTableName, indexTables, partTables, segmentTableName, type IndexProgress, type WorkerState } from "../project.js";
import { batchFilters, columnStorage, columnsToAdd, MAX_FILTER_COLUMNS, type BatchFilters } from "../filter-fields.js";
import type { IndexRow, LanceStore, ObjectRow, SegmentRow } from "../store/lance-store.js";
import type { IndexRecord, JsonObject } from "../types.js";
import { highlightsEnabled, imageValues, MAX_IMAGES_PER_OBJECT, searchableText, segmentableFields, segmentDelimiter, type ImageValue } from "./extract.js";
import { segmentText } from "./segment.js";
import { textForm } from "../text-form.js";

/** Objects embedded and committed per batch. */
export const BATCH_SIZE = 128;
/** Rows written before the built indexes are refreshed during a long ingest. */
export const OPTIMIZE_EVERY = 20_000;
/** How long the worker waits for the write lock before it gives up and exits (the next command starts another). */
const WORKER_LOCK_WAIT_MS = 30 * 60_000;
/** How often a working worker refreshes its report (worker.json), at the least. */
export const HEARTBEAT_MS = 15_000;
/** How often a worker with a stop signal, waiting for the write lock, looks whether it was told to stop. */
const LOCK_LOOK_MS = 500;
/** How long an idle worker waits for new work before exiting. */
const LINGER_MS = 1500;

export interface WorkerLog {
  (message: string): void;
}

/**
 * The highlight segments of one object, without vectors yet: cut from the object as stored, so their
 * offsets are into its text, and their text put in the index's form (text-form.ts).
 */
function objectSegments(row: ObjectRow, object: JsonObject, index: IndexRecord, form: (text: string) => string): Omit<SegmentRow, "vector">[] {
  return segmentableFields(object, index.configuration).flatMap(({ field, text }) =>
    segmentText(text, segmentDelimiter(index.configuration, field)).map((segment, position) => ({
      id: JSON.stringify([row.id, field, position]),
      object_id: row.id,
      seq: row.seq,
      field,
      position,
      start_char: segment.start,
      end_char: segment.end,
      text: form(segment.text),
    })),
  );
}

/** What one batch gives an index: per object its text and segments, filter values, and the objects that cannot be indexed. */
interface PreparedBatch {
  indexable: { row: ObjectRow; text: string; segments: Omit<SegmentRow, "vector">[]; images: ImageValue[] }[];
  filters: BatchFilters;
  /** object id → why it cannot be indexed */
  errors: Map<string, string>;
}

/**
 * Reads a batch's objects for an index. Anything that goes wrong with one object (a declared field
 * its value cannot be read as, a segment delimiter that fails) puts that object in ERROR; the rest
 * of the batch goes on.
 */
function prepareBatch(batch: readonly ObjectRow[], index: IndexRecord): PreparedBatch {
  const errors = new Map<string, string>();
  const parsed: (PreparedBatch["indexable"][number] & { object: JsonObject })[] = [];
  const highlights = highlightsEnabled(index.configuration);
  const form = textForm(index);
  for (const row of batch) {
    try {
      const object = JSON.parse(row.body) as JsonObject;
      const images = imageValues(object, index.configuration);
      if (images.length > MAX_IMAGES_PER_OBJECT) {
        throw new ValidationError("TOO_MANY_IMAGES", `${images.length.toLocaleString("en-US")} images; an object holds at most ${MAX_IMAGES_PER_OBJECT} in an image index`);
      }
      parsed.push({ row, object, text: form(searchableText(object, index.configuration)), segments: highlights ? objectSegments(row, object, index, form) : [], images });
    } catch (error) {
      errors.set(row.id, error instanceof Error ? error.message : String(error));
    }
  }
  // Filter values first: an object with a value its declared type cannot read is an error, not indexed.
  const filters = batchFilters(parsed.map(({ row, object }) => ({ id: row.id, object })), index.configuration, form);
  for (const [id, message] of filters.errors) errors.set(id, message);
  const indexable = parsed.filter(({ row }) => !errors.has(row.id)).map(({ row, text, segments, images }) => ({ row, text, segments, images }));
  return { indexable, filters, errors };
}

/** Thrown out of a lock wait when the stop signal came: the run ends without committing what it held. */
class WorkerStopped extends Error {}

/**
 * A write of a bucket project's worker refused because another process took its lease or claim over
 * (it paused, or could not renew in time): not a failure of the worker, whose next pass redoes it.
 */
function lostWrites(error: unknown): boolean {
  return error instanceof ConflictError && (error.code === "LEASE_LOST" || error.code === "FENCED" || error.code === "CLAIM_LOST");
}

class Worker {
  private readonly pools = new Map<string, EmbeddingPool>();
  private readonly capped = new Set<string>();
  private readonly startedAt = Date.now();
  /** Objects indexed by this worker so far. */
  private indexed = 0;
  private compacted = false;
  /** This worker's claims on indexes (ProjectLocks.claim), held while it works on them. */
  private readonly claims = new Map<string, Claim>();
  /** Indexes another live worker had claimed when this one looked (bucket projects' shared work). */
  readonly claimedElsewhere = new Set<string>();

  constructor(
    private readonly ctx: EngineContext,
    private readonly log: WorkerLog,
    /** run by `semsearch worker` (its reports say so: it logs on its standard error) */
    private readonly foreground = false,
  ) {}

  private pool(index: IndexRecord): EmbeddingPool {
    const model = indexModel(index);
    const key = JSON.stringify(model);
    let pool = this.pools.get(key);
    if (!pool) {
      pool = createEmbeddingPool(model, undefined, { imageCache: path.join(this.ctx.project.localDir, "cache", "images") });
      this.pools.set(key, pool);
    }
    return pool;
  }

  /**
   * Runs `fn` under the project write lock, waiting long (a large add may hold it for minutes), but
   * not forever. With a stop signal, the wait gives up once it comes (WorkerStopped): a worker told to
   * stop does not wait for another process's add to end; what it had not committed is redone by the
   * next run, as after a kill.
   */
  private async locked<T>(fn: () => Promise<T>): Promise<T> {
    if (this.signal === undefined) return this.ctx.locked(fn, WORKER_LOCK_WAIT_MS);
    const deadline = Date.now() + WORKER_LOCK_WAIT_MS;
    for (;;) {
      let entered = false;
      try {
        return await this.ctx.locked(() => {
          entered = true;
          return fn();
        }, Math.max(0, Math.min(LOCK_LOOK_MS, deadline - Date.now())));
      } catch (error) {
        // (a LOCKED from inside fn is its own failure: fn is never run twice)
        if (entered || !(error instanceof ConflictError && error.code === "LOCKED") || Date.now() >= deadline) throw error;
        if (this.stopping) throw new WorkerStopped(`held by ${await (await this.ctx.project.locks()).describeWriter()}`);
      }
    }
  }

  /** Whether the index still exists (it may be deleted while the worker embeds). */
  private async exists(index: IndexRecord): Promise<boolean> {
    return (await this.ctx.project.indexes()).some((candidate) => candidate.id === index.id);
  }

  /** Saves progress (write lock held), unless the index was deleted meanwhile. */
  private async saveProgress(index: IndexRecord, change: (progress: IndexProgress) => void): Promise<boolean> {
    const { project } = this.ctx;
    if (!(await this.exists(index))) return false;
    const progress = await project.progress(index.id);
    change(progress);
    await project.saveProgress(index.id, progress);
    return true;
  }

  private last: { phase: WorkerState["phase"]; index: string | null; pending: number } = { phase: "idle", index: null, pending: 0 };
  /** Whether `last` was written (a worker that has not reported yet has nothing in worker.json). */
  private reported = false;

  /** Tells `worker status` (and `--wait`) what this worker is doing. */
  private async report(phase: WorkerState["phase"], index: string | null, pending: number): Promise<void> {
    this.last = { phase, index, pending };
    this.reported = true;
    const now = Date.now();
    const seconds = (now - this.startedAt) / 1000;
    await this.ctx.project.saveWorkerState({
      pid: process.pid,
      phase,
      index,
      indexed: this.indexed,
      pending,
      rate: seconds > 0 ? Math.round((this.indexed / seconds) * 10) / 10 : 0,
      started_at: new Date(this.startedAt).toISOString(),
      updated_at: new Date(now).toISOString(),
      ...(this.foreground ? { foreground: true } : {}),
    });
  }

  /**
   * Rewrites the last report with a new time, so `--wait` can tell a worker that is alive and busy
   * (training a vector index, waiting for a long add's lock) from one that has stopped responding.
   */
  heartbeat(): void {
    this.report(this.last.phase, this.last.index, this.last.pending).catch(() => {
      // a full disk, say: the next report tries again
    });
  }

  /**
   * Reads the next batch of pending objects. Under the write lock, so the batch is committed state:
   * never rows of an add still being written (which a rollback could take back after this worker had
   * moved its watermark past the objects they replaced).
   */
  private async nextBatch(index: IndexRecord): Promise<{ batch: ObjectRow[]; from: number } | null> {
    const store = await this.ctx.store();
    return this.locked(async () => {
      if (!(await this.exists(index))) return null;
      const progress = await this.ctx.project.progress(index.id);
      const batch = await store.objectsAfter(progress.indexedSeq, BATCH_SIZE);
      if (batch.length > 0) {
        progress.processingSeq = (batch.at(-1) as ObjectRow).seq;
        await this.ctx.project.saveProgress(index.id, progress);
      }
      return { batch, from: progress.indexedSeq };
    });
  }

  /** This worker's claim on the index: held already, taken now, or null while another worker holds it. */
  private async claim(index: IndexRecord): Promise<Claim | null> {
    let claim = this.claims.get(index.id);
    if (!claim) {
      claim = (await (await this.ctx.project.locks()).claim(index.id)) ?? undefined;
      if (!claim) {
        this.claimedElsewhere.add(index.id);
        return null;
      }
      this.claimedElsewhere.delete(index.id);
      this.claims.set(index.id, claim);
    }
    return claim;
  }

  private async unclaim(indexId: string): Promise<void> {
    const claim = this.claims.get(indexId);
    this.claims.delete(indexId);
    await claim?.release();
  }

  /** Embeds and commits one batch of pending objects; false when the index is caught up. */
  private async indexBatch(index: IndexRecord, claim: Claim): Promise<boolean> {
    const store = await this.ctx.store();
    const next = await this.nextBatch(index);
    if (next === null) return false;
    const { batch, from } = next;
    failpoint("worker:read");
    if (batch.length === 0) {
      await this.catchUp(index);
      return false;
    }
    const lastSeq = (batch.at(-1) as ObjectRow).seq;
    await this.report("indexing", index.id, await store.countObjects(from));

    const prepared = prepareBatch(batch, index);
    const { filters } = prepared;
    const images = isImageIndex(index.configuration) ? await this.embedImages(index, prepared) : null;
    const { indexable, vectors } = await this.embedBatch(index, prepared);
    // An image index ranks objects by their images (images table): its object rows carry no vector of their own.
    const objectVectors = images === null;
    const texts = indexable.map((entry) => entry.text);
    const segments = indexable.flatMap((entry) => entry.segments);
    const none = new Float32Array(index.dimension);
    const rows: IndexRow[] = indexable.map(({ row }, i) => ({
      id: row.id,
      seq: row.seq,
      text: texts[i] as string,
      vector: objectVectors ? (vectors[i] as Float32Array) : none,
      filters: filters.records.get(row.id),
    }));
    const segmentRows: SegmentRow[] = segments.map((segment, i) => ({
      ...segment,
      vector: vectors[(objectVectors ? texts.length : 0) + i] as Float32Array,
      filters: filters.records.get(segment.object_id),
    }));
    const imageRows: SegmentRow[] = indexable.flatMap(({ row, images: values }) =>
      values.map((image, i) => ({
        id: JSON.stringify([row.id, image.field, image.position]),
        object_id: row.id,
        seq: row.seq,
        field: image.field,
        position: image.position,
        start_char: 0,
        end_char: 0,
        text: image.value,
        vector: images?.get(row.id)?.[i] as Float32Array,
        filters: filters.records.get(row.id),
      })),
    );

    let claimLost = false;
    const committed = await this.locked(async () => {
      const { project } = this.ctx;
      if (!(await this.exists(index))) return false;
      // A worker that paused past its claim: another has taken the index over and redoes this batch.
      if (!(await claim.stillHeld())) {
        claimLost = true;
        return false;
      }
      // Objects replaced or deleted while this batch was embedded are skipped: their newer
      // version has a higher seq and is picked up by a later batch, a deletion already removed its rows.
      const current = await store.getObjects(batch.map((row) => row.id));
      const isLive = (id: string, seq: number) => current.get(id)?.seq === seq;
      const live = rows.filter((row) => isLive(row.id, row.seq));
      const failed = batch.filter((row) => prepared.errors.has(row.id) && isLive(row.id, row.seq)).map((row) => row.id);
      const highlights = highlightsEnabled(index.configuration);
      await this.ensureColumns(store, index, filters);
      await store.upsertIndexRows(indexTableName(index.id), live);
      failpoint("worker:rows");
      // A failed object's earlier version must not stay searchable.
      await store.deleteIndexRows(indexTableName(index.id), failed);
      const liveIds = new Set(live.map((row) => row.id));
      if (highlights) await store.replaceSegments(segmentTableName(index.id), [...liveIds, ...failed], segmentRows.filter((row) => liveIds.has(row.object_id)));
      if (images) await store.replaceSegments(imageTableName(index.id), [...liveIds, ...failed], imageRows.filter((row) => liveIds.has(row.object_id)));
      const saved = await project.progress(index.id);
      for (const row of live) delete saved.errors[row.id];
      for (const id of failed) saved.errors[id] = { seq: (current.get(id) as ObjectRow).seq, message: prepared.errors.get(id) as string };
      saved.indexedSeq = Math.max(saved.indexedSeq, lastSeq);
      saved.processingSeq = null;
      delete saved.blocked;
      await project.saveProgress(index.id, saved);
      return true;
    });
    if (!committed) {
      if (claimLost) {
        this.log(`${index.id}: another worker took the index over while this batch was embedded; the batch was dropped`);
        this.claims.delete(index.id);
      } else this.log(`${index.id}: deleted while its batch was embedded; the batch was dropped`);
      return false;
    }
    this.indexed += batch.length;
    this.log(`${index.id}: indexed ${batch.length} objects up to seq ${lastSeq}`);
    return true;
  }

  /**
   * Embeds a batch's texts and segments. Should the model fail on the batch (not for want of a
   * model: that blocks the index), each object is embedded alone: objects the model fails on are
   * put in ERROR with the reason and the rest are indexed. If it fails on every object, the model
   * itself does not work here: MODEL_UNREADABLE, which blocks the index.
   */
  private async embedBatch(index: IndexRecord, prepared: PreparedBatch): Promise<{ indexable: PreparedBatch["indexable"]; vectors: Float32Array[] }> {
    const pool = this.pool(index);
    const objectTexts = !isImageIndex(index.configuration);
    const inputs = (entries: PreparedBatch["indexable"]) => [...(objectTexts ? entries.map((entry) => entry.text) : []), ...entries.flatMap((entry) => entry.segments.map((segment) => segment.text))];
    const all = inputs(prepared.indexable);
    if (all.length === 0) return { indexable: prepared.indexable, vectors: [] };
    try {
      return { indexable: prepared.indexable, vectors: await pool.embed(all) };
    } catch (error) {
      if (error instanceof SemsearchError && MODEL_UNAVAILABLE.has(error.code)) throw error;
      this.log(`${index.id}: embedding a batch failed (${error instanceof Error ? error.message.split("\n")[0] : String(error)}); embedding its objects one by one`);
    }
    const kept: PreparedBatch["indexable"] = [];
    const textVectors: Float32Array[] = [];
    const segmentVectors: Float32Array[] = [];
    let lastError: unknown;
    for (const entry of prepared.indexable) {
      try {
        const embedded = await pool.embed(inputs([entry]));
        kept.push(entry);
        if (objectTexts) textVectors.push(embedded.shift() as Float32Array);
        segmentVectors.push(...embedded);
      } catch (error) {
        if (error instanceof SemsearchError && MODEL_UNAVAILABLE.has(error.code)) throw error;
        lastError = error;
        prepared.errors.set(entry.row.id, `embedding failed: ${(error instanceof Error ? error.message : String(error)).split("\n")[0]?.slice(0, 300)}`);
      }
    }
    if (kept.length === 0 && prepared.indexable.length > 0) {
      throw new EnvironmentError("MODEL_UNREADABLE", `The model ${index.model} fails on every object: ${(lastError instanceof Error ? lastError.message : String(lastError)).split("\n")[0]?.slice(0, 300)}`, {
        hint: "The model's files may be damaged or its config may promise more than it can do; create the index with another model.",
      });
    }
    return { indexable: kept, vectors: [...textVectors, ...segmentVectors] };
  }

  /**
   * Fetches, decodes and embeds the images of a batch's objects. Objects with an image that cannot be
   * had are moved to the batch's errors; the vectors of the others are returned by object id.
   */
  private async embedImages(index: IndexRecord, prepared: PreparedBatch): Promise<Map<string, Float32Array[]>> {
    const pool = this.pool(index);
    if (!pool.embedImages) {
      throw new EnvironmentError("MODEL_UNSUPPORTED", `The model ${index.model} of ${index.id} does not embed images`, { hint: "Image indexes need a CLIP model: create the index again with --model Xenova/clip-vit-base-patch32 or a CLIP folder." });
    }
    const objects = prepared.indexable.map(({ row, images }) => ({ id: row.id, base: this.ctx.project.remote ? bucketImageBase() : imageBase(row.base, this.ctx.project.localDir), images }));
    const { vectors, errors } = await embedObjectImages(objects, (refs) => (pool.embedImages as NonNullable<EmbeddingPool["embedImages"]>)(refs));
    for (const [id, message] of errors) prepared.errors.set(id, message);
    prepared.indexable = prepared.indexable.filter(({ row }) => !errors.has(row.id));
    return vectors;
  }

  /**
   * Adds the filter columns a batch needs to the index table and its segment and image tables.
   * Columns of fields found on their own stop at MAX_FILTER_COLUMNS fields; named fields always
   * get theirs. The other tables get them first: a search compiles its filter from the index
   * table's columns and runs it on all of them, so they must never lack one the index table has
   * (a search between the two writes, or after a worker killed between them, would fail).
   */
  private async ensureColumns(store: LanceStore, index: IndexRecord, filters: BatchFilters): Promise<void> {
    const table = indexTableName(index.id);
    const present = await store.filterColumns(table);
    const { add, capped } = columnsToAdd(present, filters);
    if (capped && !this.capped.has(index.id)) {
      this.capped.add(index.id);
      this.log(`${index.id}: more than ${MAX_FILTER_COLUMNS} filterable fields; further fields are not filterable`);
    }
    const parts = partTables(index);
    if (parts.length > 0) {
      // Segment and image tables get every column of the index table, so one filter clause fits all.
      const all = new Map(add);
      for (const column of present) {
        const type = columnStorage(index.configuration, column);
        if (type !== null) all.set(column, type);
      }
      for (const part of parts) await store.ensureFilterColumns(part, all);
    }
    if (add.size > 0) {
      failpoint("worker:columns"); // (the other tables have columns the index table has not yet)
      await store.ensureFilterColumns(table, add);
    }
  }

  /**
   * With nothing pending, moves indexedSeq up to the last sequence handed out, so numbers
   * of deleted objects or of a crashed write do not look pending forever. Under the write
   * lock, no write is half-done, so every reserved number below it is committed or void.
   */
  private async catchUp(index: IndexRecord): Promise<void> {
    const store = await this.ctx.store();
    const { project } = this.ctx;
    if ((await project.progress(index.id)).indexedSeq >= (await project.lastSeq())) return;
    await this.locked(async () => {
      const progress = await project.progress(index.id);
      if (!(await this.exists(index))) return;
      if ((await store.objectsAfter(progress.indexedSeq, 1)).length > 0) return;
      progress.indexedSeq = Math.max(progress.indexedSeq, await project.lastSeq());
      await project.saveProgress(index.id, progress);
    });
  }

  /**
   * Refreshes the built indexes of an index whose rows got ahead of them. Folding rows into the
   * indexes and compacting happen under the write lock, like every other commit; only training a new
   * vector index (once, at VECTOR_INDEX_MIN_ROWS) runs beside writers.
   */
  private async optimize(index: IndexRecord, force: boolean, claim: Claim): Promise<void> {
    const progress = await this.ctx.project.progress(index.id);
    const behind = progress.indexedSeq - progress.optimizedSeq;
    if (behind <= 0 || (!force && behind < OPTIMIZE_EVERY)) return;
    const target = progress.indexedSeq;
    const store = await this.ctx.store();
    await this.report("optimizing", index.id, 0);
    // The models' threads (about 190 MB each) are let go while LanceDB builds and merges indexes, so
    // the two never hold their memory at once; the next batch loads them again (about a second).
    await this.releasePools();
    // The long part (training the vector index) runs without the lock, so adds are not held up by it;
    // should its commit fail against a concurrent write, the next optimize tries again.
    // An image index's object rows carry no vectors: its images table is the one searched by vector.
    for (const table of isImageIndex(index.configuration) ? partTables(index) : indexTables(index)) {
      try {
        if (await this.ctx.project.maintaining(() => claim.stillHeld(), () => store.buildVectorIndexIfDue(table))) this.log(`${table}: built the vector index`);
      } catch (error) {
        this.log(`${table}: vector index not built this time: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (this.stopping) return; // (the rest is done by the next run)
    }
    const done = await this.locked(async () => {
      if (!(await this.exists(index))) return false;
      for (const table of indexTables(index)) await store.optimizeIndexTable(table);
      return this.saveProgress(index, (p) => (p.optimizedSeq = Math.max(p.optimizedSeq, target)));
    });
    if (done) this.log(`${index.id}: optimized up to seq ${target}`);
  }

  /** Compacts the object table once this run has nothing left to index (adds write it in many batches). */
  private async compactObjects(): Promise<void> {
    if (this.compacted || this.indexed === 0) return;
    this.compacted = true;
    const store = await this.ctx.store();
    await this.report("optimizing", null, 0);
    await this.locked(async () => {
      await store.optimizeObjects();
    });
    this.log("compacted the object table");
  }

  /** Indexes whose model could not be loaded in this run: skipped until the next worker tries again. */
  readonly blocked = new Set<string>();

  /**
   * Records that an index cannot be built because its model is unavailable, so `--wait` and
   * `index get` can say why, and goes on with the other indexes.
   */
  private async block(index: IndexRecord, error: SemsearchError): Promise<void> {
    this.blocked.add(index.id);
    this.log(`${index.id}: blocked [${error.name} ${error.code}]: ${error.message}`);
    await this.locked(async () => {
      await this.saveProgress(index, (progress) => {
        progress.blocked = { name: error.name, code: error.code, message: error.message, ...(error.hint ? { hint: error.hint } : {}), at: new Date().toISOString() };
        progress.processingSeq = null;
      });
    });
  }

  /** The stop signal of the run (a foreground worker's SIGTERM): checked between steps, never inside a commit. */
  private signal: AbortSignal | undefined;

  private get stopping(): boolean {
    return this.signal?.aborted === true;
  }

  /**
   * One pass over every index; true when anything was indexed. Once the stop signal has come, it
   * starts nothing more (no other index's batch, no optimize): what is left is pending work the next
   * run finds.
   */
  private async pass(): Promise<boolean> {
    let worked = false;
    for (const index of await this.ctx.project.indexes()) {
      if (this.stopping) break;
      if (this.blocked.has(index.id)) continue;
      const claim = await this.claim(index);
      if (claim === null) continue; // another worker's (a bucket project's workers share the indexes)
      let indexed: boolean;
      try {
        indexed = await this.indexBatch(index, claim);
      } catch (error) {
        if (lostWrites(error)) {
          // (a bucket project's worker that lost its lease or claim: nothing it did not commit counts; the next pass redoes it)
          this.log(`${index.id}: ${(error as Error).message}; the batch is redone`);
          await this.unclaim(index.id);
          continue;
        }
        if (!(error instanceof SemsearchError && MODEL_UNAVAILABLE.has(error.code))) throw error;
        await this.block(index, error);
        continue;
      }
      if (this.stopping) break;
      try {
        if (indexed) {
          worked = true;
          await this.optimize(index, false, claim);
        } else {
          await this.optimize(index, true, claim);
          await this.unclaim(index.id); // caught up: any worker may take what comes next
        }
      } catch (error) {
        if (!lostWrites(error)) throw error;
        this.log(`${index.id}: ${(error as Error).message}; the next pass tries again`);
        await this.unclaim(index.id);
      }
    }
    return worked;
  }

  /** Rewrites a lost or damaged sequence counter from stored state (the highest number the store or any index holds). */
  private async restoreSeq(): Promise<void> {
    if (await this.ctx.project.seqKnown()) return;
    const store = await this.ctx.store();
    await this.locked(async () => this.ctx.project.ensureSeqAtLeast(Math.max(await store.maxSeq(), await this.ctx.project.highestProgressSeq())));
    this.log("restored the sequence counter (seq) from stored state");
  }

  /**
   * Indexes until no work is left for `lingerMs` (looking again every `pollMs`), or until `signal`
   * aborts (checked between steps: a batch in progress is committed first, then nothing more starts).
   */
  async run(options: { lingerMs?: number; pollMs?: number; signal?: AbortSignal } = {}): Promise<void> {
    const { lingerMs = LINGER_MS, pollMs = 200, signal } = options;
    this.signal = signal;
    try {
      await this.restoreSeq();
      let idleSince = Date.now();
      while (!this.stopping) {
        if (await this.pass()) {
          idleSince = Date.now();
          continue;
        }
        if (this.stopping) return;
        await this.compactObjects().catch((error: unknown) => {
          if (!lostWrites(error)) throw error;
          this.log(`compacting the object table: ${(error as Error).message}; the next run tries again`);
        });
        // (once: while it stays idle, the heartbeat keeps the report's time fresh, and a worker that
        // looks every 50 ms for a minute, or for as long as an index is blocked, would rewrite it each time)
        if (this.last.phase !== "idle" || !this.reported) await this.report("idle", null, 0);
        if (Date.now() - idleSince > lingerMs) return;
        await sleep(pollMs, undefined, signal ? { signal } : undefined).catch(() => undefined);
      }
    } catch (error) {
      if (!(error instanceof WorkerStopped)) throw error;
      this.log(`stopped while waiting for the write lock (${error.message}); what was not committed is redone by the next run`);
    }
  }

  private async releasePools(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((pool) => pool.close()));
  }

  async close(): Promise<void> {
    await this.releasePools();
    for (const id of [...this.claims.keys()]) await this.unclaim(id).catch(() => {});
  }
}

/** How long a foreground worker keeps its models loaded once idle (then frees their memory). */
const FOREGROUND_LINGER_MS = 60_000;
/** How often a foreground worker retries indexes blocked by an unavailable model. */
const BLOCKED_RETRY_MS = 60_000;

/**
 * Runs the worker in the foreground (`semsearch worker`, for systemd or a container) until `signal`
 * aborts: it holds the worker lock throughout, so no command starts a background worker beside it;
 * indexes what is pending, then looks for new work every `pollMs`. Idle for a minute, it frees its
 * models. A project not there yet is created (a damaged one is refused, as by any write). A batch in
 * progress when the signal comes is committed first, then nothing more starts (another index's batch,
 * an optimize, a compaction); a wait for the write lock is given up (the batch is redone by the next
 * run). In a local project, ConflictError WORKER_RUNNING when another worker holds the lock; in a
 * bucket project any number run at once, on any machines, each claiming the indexes it works on
 * (ProjectLocks.claim: a claim lost while a batch was embedded drops the batch).
 */
export async function runForegroundWorker(ctx: EngineContext, log: WorkerLog, options: { signal: AbortSignal; pollMs: number }): Promise<void> {
  await ctx.project.init(); // a worker started before anything was added makes the project, as the first write would
  const locks = await ctx.project.locks();
  const release = await locks.joinWorkers();
  if (!release) {
    throw new ConflictError("WORKER_RUNNING", `Another worker indexes this project: ${await locks.describeWorker()}`, {
      hint: "One worker per local project: stop the other one first (`semsearch worker status` shows it).",
    });
  }
  const { signal, pollMs } = options;
  log(`worker running in the foreground on ${ctx.project.dir}, looking for work every ${pollMs} ms`);
  let blocked = new Set<string>();
  let blockedAt = Date.now();
  try {
    while (!signal.aborted) {
      if (Date.now() - blockedAt > BLOCKED_RETRY_MS) [blocked, blockedAt] = [new Set(), Date.now()];
      if (await hasPendingWork(ctx, blocked)) {
        const worker = new Worker(ctx, log, true);
        const heartbeat = setInterval(() => worker.heartbeat(), HEARTBEAT_MS);
        heartbeat.unref();
        try {
          await worker.run({ lingerMs: FOREGROUND_LINGER_MS, pollMs, signal });
        } finally {
          clearInterval(heartbeat);
          await worker.close();
          for (const id of worker.blocked) blocked.add(id);
          await ctx.project.saveWorkerState(null);
        }
        // (indexes other workers hold are looked at again at the next poll)
        if (worker.claimedElsewhere.size > 0) await sleep(pollMs, undefined, { signal }).catch(() => undefined);
        continue;
      }
      await sleep(pollMs, undefined, { signal }).catch(() => undefined);
    }
  } finally {
    await ctx.project.saveWorkerState(null);
    await release();
  }
}

/**
 * Runs the worker until no work is left. Returns at once when another live worker holds the lock.
 * Before exiting it releases the lock and looks once more, so work added during shutdown is not stranded.
 */
export async function runWorker(ctx: EngineContext, log: WorkerLog): Promise<void> {
  const locks = await ctx.project.locks();
  let release = await locks.tryWorker();
  const blocked = new Set<string>();
  while (release) {
    const worker = new Worker(ctx, log);
    const heartbeat = setInterval(() => worker.heartbeat(), HEARTBEAT_MS);
    heartbeat.unref();
    try {
      await worker.run();
    } finally {
      clearInterval(heartbeat);
      await worker.close();
      for (const id of worker.blocked) blocked.add(id);
      // (indexes other workers hold are theirs to finish; one that dies leaves its claim to expire, and to the next worker)
      for (const id of worker.claimedElsewhere) blocked.add(id);
      await ctx.project.saveWorkerState(null);
      await release();
    }
    // Indexes blocked by an unavailable model are retried by the next worker a command starts, not in a loop here.
    release = (await hasPendingWork(ctx, blocked)) ? await locks.tryWorker() : null;
  }
}
