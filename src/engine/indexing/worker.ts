/**
 * The background indexer. One per project (worker.lock); started detached by any command
 * that leaves work pending, it embeds pending objects into every index, commits them
 * under the project write lock, folds them into the built indexes, and exits when idle.
 *
 * Pending work is derived from stored state alone (objects with seq above an index's
 * indexedSeq), so a worker killed at any moment is simply restarted and resumes; rows are
 * upserted by object id, so reprocessing a batch indexes nothing twice.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { createEmbeddingPool, type EmbeddingPool } from "../embedding/pool.js";
import type { EngineContext } from "../context.js";
import { tryLock, type Release } from "../lock.js";
import { indexTableName, segmentTableName, type IndexProgress } from "../project.js";
import type { IndexRow, ObjectRow, SegmentRow } from "../store/lancedb.js";
import type { IndexRecord, JsonObject } from "../types.js";
import { embeddableText, highlightsEnabled, searchableText, segmentableFields, segmentDelimiter } from "./extract.js";
import { segmentText } from "./segment.js";

/** Objects embedded and committed per batch. */
export const BATCH_SIZE = 128;
/** Rows written before the built indexes are refreshed during a long ingest. */
export const OPTIMIZE_EVERY = 20_000;
/** How long an idle worker waits for new work before exiting. */
const LINGER_MS = 1500;

export interface WorkerLog {
  (message: string): void;
}

/** The highlight segments of one object, without vectors yet. */
function objectSegments(row: ObjectRow, object: JsonObject, index: IndexRecord): Omit<SegmentRow, "vector">[] {
  return segmentableFields(object, index.configuration).flatMap(({ field, text }) =>
    segmentText(text, segmentDelimiter(index.configuration, field)).map((segment, position) => ({
      id: JSON.stringify([row.id, field, position]),
      object_id: row.id,
      seq: row.seq,
      field,
      position,
      start_char: segment.start,
      end_char: segment.end,
      text: segment.text,
    })),
  );
}

class Worker {
  private readonly pools = new Map<string, EmbeddingPool>();

  constructor(
    private readonly ctx: EngineContext,
    private readonly log: WorkerLog,
  ) {}

  private pool(model: string): EmbeddingPool {
    let pool = this.pools.get(model);
    if (!pool) {
      pool = createEmbeddingPool(model);
      this.pools.set(model, pool);
    }
    return pool;
  }

  /** Saves progress under the write lock, unless the index was deleted meanwhile. */
  private async updateProgress(index: IndexRecord, change: (progress: IndexProgress) => void): Promise<boolean> {
    const { project } = this.ctx;
    return project.locked(async () => {
      if (!project.indexes().some((candidate) => candidate.id === index.id)) return false;
      const progress = project.progress(index.id);
      change(progress);
      project.saveProgress(index.id, progress);
      return true;
    });
  }

  /** Embeds and commits one batch of pending objects; false when the index is caught up. */
  private async indexBatch(index: IndexRecord): Promise<boolean> {
    const store = await this.ctx.store();
    const progress = this.ctx.project.progress(index.id);
    const batch = await store.objectsAfter(progress.indexedSeq, BATCH_SIZE);
    if (batch.length === 0) {
      await this.catchUp(index);
      return false;
    }
    const lastSeq = (batch.at(-1) as ObjectRow).seq;
    if (!(await this.updateProgress(index, (p) => (p.processingSeq = lastSeq)))) return false;

    const objects = batch.map((row) => JSON.parse(row.body) as JsonObject);
    const texts = objects.map((object) => searchableText(object, index.configuration));
    const segments = highlightsEnabled(index.configuration) ? batch.flatMap((row, i) => objectSegments(row, objects[i] as JsonObject, index)) : [];
    const vectors = await this.pool(index.model).embed([...texts.map(embeddableText), ...segments.map((segment) => segment.text)]);
    const rows: IndexRow[] = batch.map((row, i) => ({
      id: row.id,
      seq: row.seq,
      text: texts[i] as string,
      vector: vectors[i] as Float32Array,
    }));
    const segmentRows: SegmentRow[] = segments.map((segment, i) => ({ ...segment, vector: vectors[texts.length + i] as Float32Array }));

    await this.ctx.project.locked(async () => {
      const { project } = this.ctx;
      if (!project.indexes().some((candidate) => candidate.id === index.id)) return;
      // Objects replaced or deleted while this batch was embedded are skipped: their newer
      // version has a higher seq and is picked up by a later batch, a deletion already removed its rows.
      const current = await store.getObjects(rows.map((row) => row.id));
      const live = rows.filter((row) => current.get(row.id)?.seq === row.seq);
      await store.upsertIndexRows(indexTableName(index.id), live);
      if (highlightsEnabled(index.configuration)) {
        const liveIds = new Set(live.map((row) => row.id));
        await store.replaceSegments(segmentTableName(index.id), [...liveIds], segmentRows.filter((row) => liveIds.has(row.object_id)));
      }
      const saved = project.progress(index.id);
      saved.indexedSeq = Math.max(saved.indexedSeq, lastSeq);
      saved.processingSeq = null;
      project.saveProgress(index.id, saved);
    });
    this.log(`${index.id}: indexed ${batch.length} objects up to seq ${lastSeq}`);
    return true;
  }

  /**
   * With nothing pending, moves indexedSeq up to the last sequence handed out, so numbers
   * of deleted objects or of a crashed write do not look pending forever. Under the write
   * lock, no write is half-done, so every reserved number below it is committed or void.
   */
  private async catchUp(index: IndexRecord): Promise<void> {
    const store = await this.ctx.store();
    const { project } = this.ctx;
    if (project.progress(index.id).indexedSeq >= project.lastSeq()) return;
    await project.locked(async () => {
      const progress = project.progress(index.id);
      if (!project.indexes().some((candidate) => candidate.id === index.id)) return;
      if ((await store.objectsAfter(progress.indexedSeq, 1)).length > 0) return;
      progress.indexedSeq = Math.max(progress.indexedSeq, project.lastSeq());
      project.saveProgress(index.id, progress);
    });
  }

  /** Refreshes the built indexes of an index whose rows got ahead of them. */
  private async optimize(index: IndexRecord, force: boolean): Promise<void> {
    const progress = this.ctx.project.progress(index.id);
    const behind = progress.indexedSeq - progress.optimizedSeq;
    if (behind <= 0 || (!force && behind < OPTIMIZE_EVERY)) return;
    const target = progress.indexedSeq;
    const store = await this.ctx.store();
    await store.optimizeIndexTable(indexTableName(index.id));
    if (highlightsEnabled(index.configuration)) await store.optimizeIndexTable(segmentTableName(index.id));
    await this.updateProgress(index, (p) => (p.optimizedSeq = Math.max(p.optimizedSeq, target)));
    this.log(`${index.id}: optimized up to seq ${target}`);
  }

  /** One pass over every index; true when anything was indexed. */
  private async pass(): Promise<boolean> {
    let worked = false;
    for (const index of this.ctx.project.indexes()) {
      if (await this.indexBatch(index)) {
        worked = true;
        await this.optimize(index, false);
      } else {
        await this.optimize(index, true);
      }
    }
    return worked;
  }

  async run(): Promise<void> {
    let idleSince = Date.now();
    while (true) {
      if (await this.pass()) {
        idleSince = Date.now();
        continue;
      }
      if (Date.now() - idleSince > LINGER_MS) return;
      await sleep(200);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((pool) => pool.close()));
  }
}

/** Whether any index has objects it has not indexed or optimized yet. */
export async function hasPendingWork(ctx: EngineContext): Promise<boolean> {
  const last = ctx.project.lastSeq();
  return ctx.project.indexes().some((index) => {
    const progress = ctx.project.progress(index.id);
    return progress.indexedSeq < last || progress.optimizedSeq < progress.indexedSeq;
  });
}

/**
 * Runs the worker until no work is left. Returns at once when another live worker holds the lock.
 * Before exiting it releases the lock and looks once more, so work added during shutdown is not stranded.
 */
export async function runWorker(ctx: EngineContext, log: WorkerLog): Promise<void> {
  let release: Release | null = tryLock(ctx.project.workerLock);
  while (release) {
    const worker = new Worker(ctx, log);
    try {
      await worker.run();
    } finally {
      await worker.close();
      release();
    }
    release = (await hasPendingWork(ctx)) ? tryLock(ctx.project.workerLock) : null;
  }
}
