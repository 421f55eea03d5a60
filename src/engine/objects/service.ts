/** Object store operations: add (upsert), get, list, delete. */
import path from "node:path";
import { rmSync } from "node:fs";
import type { EngineContext } from "../context.js";
import { ConflictError, NotFoundError, ValidationError } from "../errors.js";
import { newObjectId } from "../ids.js";
import { startWorker } from "../indexing/spawn.js";
import { isConfinedBase } from "../images/reference.js";
import { failpoint } from "../failpoint.js";
import { rollBackAdd } from "../journals.js";
import { currentOwner } from "../owner.js";
import { integerIn } from "../params.js";
import { objectIndexStatus } from "../status.js";
import type { ObjectRow } from "../store/lance-store.js";
import type { JsonObject, ObjectInfo, StoredObject } from "../types.js";
import { readObjects, replayable, type ObjectsInput, type ReplayableInput } from "./input.js";
import { deleteObjects } from "./delete.js";
import { IdFieldGuess } from "./id-guess.js";
import { objectId } from "./parse.js";

export type { ObjectsInput };

export interface AddObjectsOptions {
  /**
   * Field holding the object id (default `id`). Named, every object must have it. Not named, objects
   * without an `id` get a generated UUID, unless one of their fields looks like their id (id-guess.ts):
   * then the add is refused, naming it (or asked for with `generateIds`).
   */
  idField?: string;
  /** Objects without an id get a generated UUID, whatever their fields look like (`--generate-ids`). */
  generateIds?: boolean;
  /** How messages spell the two options above for the caller (default: the CLI's flags). */
  spelling?: OptionSpelling;
  /**
   * Stores the input's one object under this id (`PUT /v1/objects/<id>`): its id field, when it has
   * one, must hold the same id; an input of more or fewer than one object is refused.
   */
  id?: string;
  /** Called while reading (objects validated so far) and while writing (objects written of the total). */
  onProgress?: (progress: AddProgress) => void;
}

/** How the caller's users set `idField` and `generateIds`, for messages that tell them to. */
export interface OptionSpelling {
  idField(field: string): string;
  generateIds: string;
}

/** The CLI's flags: `--id-field sku`, `--generate-ids`. */
export const CLI_SPELLING: OptionSpelling = {
  idField: (field) => `--id-field ${/^[A-Za-z0-9_.-]+$/.test(field) ? field : JSON.stringify(field)}`,
  generateIds: "--generate-ids",
};

export interface AddProgress {
  phase: "reading" | "writing";
  done: number;
  /** known while writing */
  total?: number;
}

/** Objects in one add from which the object table is compacted right after it. */
const COMPACT_AFTER = 20_000;
/** Objects read between two reading-progress calls. */
const READ_PROGRESS_EVERY = 5000;

export interface AddObjectsResult {
  /** Distinct objects written (a repeated id counts once: the last one wins). */
  count: number;
  /** Their ids, in first-seen order; left out above MAX_LISTED_IDS objects. */
  ids?: string[];
}

/** Objects written per LanceDB commit while adding. */
export const ADD_BATCH = 2000;
/** Ids listed in an add's result at most. */
export const MAX_LISTED_IDS = 10_000;

/**
 * Adds objects in two passes over the inputs, so memory stays bounded by a batch, not by the input:
 * 1. read and validate every object (a malformed one anywhere writes nothing) and collect the ids;
 * 2. holding the write lock, write them in batches of ADD_BATCH, after recording the object table's
 *    version in a journal. If the process dies mid-way, the next writer rolls the table back to that
 *    version (see EngineContext.locked): an add is all or nothing. A repeated id keeps its last object.
 * Starts the background worker when indexes exist.
 */
export async function addObjects(
  ctx: EngineContext,
  inputs: readonly ObjectsInput[],
  options: AddObjectsOptions,
  now: Date,
): Promise<AddObjectsResult> {
  const idField = options.idField ?? "id";
  const spelling = options.spelling ?? CLI_SPELLING;
  const spooled: string[] = [];
  try {
    const replay: ReplayableInput[] = [];
    const bases: string[] = inputs.map((input) =>
      input.base !== undefined && isConfinedBase(input.base) ? input.base : path.resolve(input.base ?? ("path" in input ? path.dirname(path.resolve(input.path)) : ".")),
    );
    for (const input of inputs) replay.push(await replayable(input, async () => spooled[spooled.push(await ctx.project.spoolFile()) - 1] as string));
    // Pass 1: validate everything, remember the ids (and which repeat). Generated ids are fixed here, by position.
    const ids = new Set<string>();
    const repeated = new Set<string>();
    const generated: string[] = [];
    const progress = options.onProgress ?? (() => {});
    let read = 0;
    if (options.id !== undefined) objectId({ id: options.id }, "id", "the object id");
    const givenId = (object: JsonObject, where: string) => fixedId(options.id, objectId(object, idField, where), idField, where);
    const guess = new IdFieldGuess();
    let firstWithout: string | undefined;
    for (const input of replay) {
      for await (const { object, where, id: fixed } of readObjects(input)) {
        let id = fixed ?? givenId(object, where);
        if (id === null) {
          if (options.idField !== undefined && options.id === undefined && !options.generateIds) throw missingIdField(idField, where, spelling);
          firstWithout ??= where;
          if (!options.generateIds) guess.add(object);
          generated.push((id = newObjectId()));
        } else if (ids.has(id)) repeated.add(id);
        ids.add(id);
        if (++read % READ_PROGRESS_EVERY === 0) progress({ phase: "reading", done: read });
      }
    }
    if (options.id !== undefined && read !== 1) {
      throw new ValidationError("INVALID_INPUT", `The body holds ${read} objects: it must be exactly one object, stored under the id "${options.id}"`);
    }
    if (generated.length > 0 && options.id === undefined && !options.generateIds) {
      // (only when no object has an id: a mixed input would be refused again under the field named)
      const likely = generated.length === read ? guess.best() : null;
      if (likely !== null) throw idFieldGuessed(likely, generated.length, firstWithout as string, spelling);
      ctx.warn({ code: "IDS_GENERATED", message: `${generated.length} object${generated.length === 1 ? " has" : "s have"} no "id" field (the first at ${firstWithout}): ${generated.length === 1 ? "it was given a random id" : "they were given random ids"}. Name the field that holds ids (${spelling.idField("<field>")}), or pass ${spelling.generateIds} to say this is meant.` });
    }
    if (ids.size === 0) return { count: 0, ids: [] };
    // Pass 2: write in batches, all or nothing.
    const store = await ctx.store();
    const stamp = now.toISOString();
    await ctx.locked(async () => {
      await ctx.project.beginAdd(currentOwner(), await store.objectsVersion());
      failpoint("add:journal");
      try {
        // The counter must be above every number in stored state, even if its file was lost or damaged.
        await ctx.project.ensureSeqAtLeast(Math.max(await store.maxSeq(), await ctx.project.highestProgressSeq()));
        // Objects that exist already keep their created_at and are replaced; new ones are appended,
        // which costs a batch, where a merge would cost the whole table.
        const existing = await store.createdAt([...ids]);
        const written = new Set<string>(); // repeated ids already written by this add
        let nextGenerated = 0;
        let consumed = 0; // objects of the input written so far (a repeated id counts each time)
        let batch = new Map<string, { object: JsonObject; base: string }>();
        const flush = async () => {
          if (batch.size === 0) return;
          const first = await ctx.project.reserveSeq(batch.size);
          const rows: ObjectRow[] = [...batch].map(([id, { object, base }], i) => {
            const created = existing.get(id) ?? stamp;
            // (the stamp is taken before waiting for the write lock: an add that waited for another's,
            // which created the object meanwhile, would otherwise update it before its creation)
            return { id, body: JSON.stringify(object), base, seq: first + i, created_at: created, updated_at: created > stamp ? created : stamp };
          });
          const replaces = (row: ObjectRow) => existing.has(row.id) || written.has(row.id);
          await store.appendObjects(rows.filter((row) => !replaces(row)));
          await store.upsertObjects(rows.filter(replaces));
          for (const id of batch.keys()) if (repeated.has(id)) written.add(id);
          failpoint("add:batch");
          progress({ phase: "writing", done: consumed, total: read });
          batch = new Map();
        };
        for (const [inputIndex, input] of replay.entries()) {
          for await (const { object, where, id: fixed } of readObjects(input)) {
            const given = fixed ?? givenId(object, where);
            const id = given ?? generated[nextGenerated++];
            // A file changed between the two passes (replaced, appended to) must not be half added.
            if (id === undefined || (given !== null && !ids.has(given))) throw inputChanged(where);
            consumed++;
            batch.delete(id);
            batch.set(id, { object, base: bases[inputIndex] as string });
            if (batch.size >= ADD_BATCH) await flush();
          }
        }
        if (consumed !== read || nextGenerated !== generated.length) throw inputChanged(replay.at(-1)?.source ?? "the input");
        await flush();
      } catch (error) {
        await rollBackAdd(ctx.project, store);
        throw error;
      }
      failpoint("add:written");
      await ctx.project.endAdd();
      // Committed. A large add leaves many small fragments and rows its id index does not cover yet;
      // compacting is an optimisation, so its failure (a full disk, say) is a warning, not a failed add.
      if (read >= COMPACT_AFTER) {
        try {
          failpoint("add:compact");
          await store.optimizeObjects();
        } catch (error) {
          const message = `The objects were added, but compacting the object table failed: ${describe(error)}. The worker compacts it later.`;
          ctx.warn({ code: "COMPACTION_FAILED", message });
        }
      }
    });
    if ((await ctx.project.indexes()).length > 0) await startWorker(ctx);
    return ids.size <= MAX_LISTED_IDS ? { count: ids.size, ids: [...ids] } : { count: ids.size };
  } finally {
    for (const file of spooled) rmSync(file, { force: true });
  }
}

/** An object without the id field the caller named. */
function missingIdField(idField: string, where: string, spelling: OptionSpelling): ValidationError {
  return new ValidationError("MISSING_ID", `${where}: the object has no field "${idField}", named as the id field`, {
    hint: `Give every object a "${idField}", or add ${spelling.generateIds} to give those without one a random id.`,
    issues: [{ path: idField, message: "missing" }],
  });
}

/** Objects without an `id` whose field `field` looks like their id: refused rather than given random ids. */
function idFieldGuessed(field: string, count: number, where: string, spelling: OptionSpelling): ValidationError {
  return new ValidationError("NO_ID_FIELD", `${where}: no "id" field; did you mean ${spelling.idField(field)}? (${count === 1 ? "the object has" : `all ${count} objects without an id have`} a unique "${field}")`, {
    hint: `Add them with ${spelling.idField(field)}, or with ${spelling.generateIds} to give them random ids (then adding them again stores them twice).`,
    issues: [{ path: "id", message: `missing; "${field}" looks like the id` }],
  });
}

/** The id an object is stored under when the caller fixes it: the object's own id must agree. */
function fixedId(fixed: string | undefined, own: string | null, idField: string, where: string): string | null {
  if (fixed === undefined) return own;
  if (own !== null && own !== fixed) {
    throw new ValidationError("ID_MISMATCH", `${where}: field "${idField}" is "${own.slice(0, 200)}", but the object is stored as "${fixed.slice(0, 200)}": give the same id, or none`, {
      issues: [{ path: idField, message: "differs from the id in the path" }],
    });
  }
  return fixed;
}

function inputChanged(where: string): ConflictError {
  return new ConflictError("INPUT_CHANGED", `The input changed while it was being added (${where}): nothing was added`, {
    hint: "Add it again once nothing else writes to the file.",
  });
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function toStored(row: ObjectRow): StoredObject {
  return { id: row.id, object: JSON.parse(row.body) as JsonObject, created_at: row.created_at, updated_at: row.updated_at };
}

async function findObjectRow(ctx: EngineContext, id: string): Promise<ObjectRow> {
  // No stored id holds NUL (adds refuse it), and SQL literals cannot carry one.
  const row = (await ctx.project.exists()) && !id.includes("\u0000") ? (await (await ctx.store()).getObjects([id])).get(id) : undefined;
  if (!row) throw new NotFoundError("OBJECT_NOT_FOUND", `Object ${JSON.stringify(id.slice(0, 200))} not found`);
  return row;
}

/** An object with its processing state in every index. */
export async function getObject(ctx: EngineContext, id: string): Promise<ObjectInfo> {
  const row = await findObjectRow(ctx, id);
  const indexes = await Promise.all((await ctx.project.indexes()).map((index) => objectIndexStatus(ctx, index, id, row.seq)));
  const complete = indexes.every((entry) => entry.status === "READY" || entry.status === "ERROR");
  return { ...toStored(row), status: { state: complete ? "complete" : "incomplete", indexes } };
}

/** Objects listed at most at once. */
export const MAX_LIST_LIMIT = 10_000;

/** Objects in id order. ValidationError INVALID_PARAMETER for a limit outside 1..MAX_LIST_LIMIT or a negative offset. */
export async function listObjects(ctx: EngineContext, offset: number, limit: number): Promise<StoredObject[]> {
  integerIn("limit", limit, 100, 1, MAX_LIST_LIMIT);
  integerIn("offset", offset, 0, 0, Number.MAX_SAFE_INTEGER);
  if (!(await ctx.project.exists())) return [];
  return (await (await ctx.store()).listObjects(offset, limit)).map(toStored);
}

/** Deletes an object from the store and from every index (delete.ts). */
export async function deleteObject(ctx: EngineContext, id: string): Promise<void> {
  await deleteObjects(ctx, [id]);
}
