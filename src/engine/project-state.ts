/** The shapes of a project's state files, as types and as the schemas their reads are checked against. */
import * as v from "valibot";
import { ModelSpecSchema } from "./embedding/model-spec.js";
import type { Owner } from "./owner.js";

export interface IndexProgress {
  /** Every object with seq <= indexedSeq is in the index table (or in `errors`). */
  indexedSeq: number;
  /** Every object with seq <= optimizedSeq is also covered by the built full-text/vector indexes. */
  optimizedSeq: number;
  /** Highest seq of the batch being embedded right now, or null. */
  processingSeq: number | null;
  /** Objects that could not be indexed, with the reason; a prototype-free record (ids are user text). */
  errors: Record<string, { seq: number; message: string }>;
  /**
   * Set when the worker cannot embed for this index at all (its model is missing, changed or
   * unreadable): what is wrong and when it was found. Cleared by the next batch that commits.
   */
  blocked?: IndexBlock;
}

export interface IndexBlock {
  /** the error's class (EnvironmentError, ValidationError), so a wait reports it with the same exit code */
  name?: string;
  code: string;
  message: string;
  hint?: string;
  at: string;
}

/** A fresh progress record: nothing indexed. */
export function emptyProgress(): IndexProgress {
  return { indexedSeq: 0, optimizedSeq: 0, processingSeq: null, errors: Object.create(null) as IndexProgress["errors"] };
}

/** What the background worker is doing, for `worker status`. */
export interface WorkerState {
  pid: number;
  /** `indexing` (embedding and writing a batch), `optimizing` (refreshing built indexes), `idle` (waiting for work before exiting) */
  phase: "indexing" | "optimizing" | "idle";
  /** the index being worked on */
  index: string | null;
  /** objects this worker has indexed since it started, and how many are still pending in the current index */
  indexed: number;
  pending: number;
  /** objects per second since the worker started */
  rate: number;
  started_at: string;
  updated_at: string;
  /** a `semsearch worker` in the foreground: it logs on its standard error, not in worker.log */
  foreground?: boolean;
}

/** The journal of an add in progress: who writes, and the object table's version to roll back to. */
export interface AddJournal extends Owner {
  objectsVersion: number;
}

/** The journal of a delete in progress: who deletes, and the ids to remove everywhere. */
export interface DeleteJournal extends Owner {
  ids: string[];
}

/**
 * The journal of an index create or delete in progress: the index and the tables it creates or
 * drops. Tables are dropped only when such a journal names them (see journals.ts): an interrupted
 * create's tables when the catalog does not list the index, an interrupted delete's always.
 */
export interface IndexJournal extends Owner {
  op: "create" | "delete";
  id: string;
  tables: string[];
}

export const Seq = v.pipe(v.number(), v.safeInteger(), v.minValue(0));
const OwnerEntries = { pid: v.pipe(v.number(), v.safeInteger(), v.minValue(1)), start: v.optional(v.string()) };
export const AddJournalSchema = v.object({ ...OwnerEntries, objectsVersion: Seq });
export const DeleteJournalSchema = v.object({ ...OwnerEntries, ids: v.array(v.pipe(v.string(), v.minLength(1), v.check((id) => !id.includes("\u0000"), "an id cannot hold NUL"))) });
const IndexId = v.pipe(v.string(), v.regex(/^idx_[a-z0-9]+$/));
export const IndexJournalSchema = v.pipe(
  v.object({ ...OwnerEntries, op: v.picklist(["create", "delete"]), id: IndexId, tables: v.array(v.string()) }),
  // a journal may name the tables of its own index only (never the object table)
  v.check(({ id, tables }) => tables.every((table) => table === `index_${id}` || table === `segments_${id}` || table === `images_${id}`), "tables: a table that is not one of the index's"),
);
export const ProgressSchema = v.object({
  indexedSeq: Seq,
  optimizedSeq: Seq,
  processingSeq: v.nullable(Seq),
  errors: v.record(v.string(), v.object({ seq: Seq, message: v.string() })),
  blocked: v.optional(v.object({ name: v.optional(v.string()), code: v.string(), message: v.string(), hint: v.optional(v.string()), at: v.string() })),
});
const IndexRecordSchema = v.object({
  id: IndexId,
  name: v.optional(v.string()),
  configuration: v.unknown(),
  model: v.string(),
  dimension: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
  embedding: v.optional(ModelSpecSchema),
  normalization: v.optional(v.literal("NFC")),
  created_at: v.string(),
});
export const CatalogSchema = v.object({ version: v.literal(1), indexes: v.array(IndexRecordSchema) });
export const WorkerStateSchema = v.object({
  pid: v.number(),
  phase: v.picklist(["indexing", "optimizing", "idle"]),
  index: v.nullable(v.string()),
  indexed: v.number(),
  pending: v.number(),
  rate: v.number(),
  started_at: v.string(),
  updated_at: v.string(),
  foreground: v.optional(v.boolean()),
});

