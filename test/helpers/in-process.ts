/**
 * The calls a CLI command makes, in this process against the built engine: each through an engine
 * of its own, opened as the command opens it (one-shot) and closed afterwards, as each command is a
 * process of its own. The engine's background worker is the real one, started by the built engine
 * as a process (dist/engine/indexing/worker-main.js); embedding threads are dist/ files too, so the
 * build must be current (`npm test` builds first).
 */
import { Readable } from "node:stream";
import { expect } from "vitest";
import type * as EngineModule from "../../src/engine/index.js";
import { waitFor } from "./wait.js";

export const { Engine, SemsearchError } = (await import(new URL("../../dist/engine/index.js", import.meta.url).href)) as typeof EngineModule;
export type Engine = EngineModule.Engine;
export type SemsearchError = EngineModule.SemsearchError;

/** Runs `fn` with an engine of its own on `project`, closing it afterwards; the warnings it gave (which a command prints on stderr) come with the result. */
export async function withEngine<T>(project: string, fn: (engine: Engine) => Promise<T>): Promise<{ result: T; warnings: EngineModule.Warning[] }> {
  const warnings: EngineModule.Warning[] = [];
  const engine = new Engine({ projectDir: project, oneShot: true, onWarning: (warning) => warnings.push(warning) });
  try {
    return { result: await fn(engine), warnings };
  } finally {
    await engine.close();
  }
}

/** What `fn` resolves to, which must succeed without a warning (as a command that exits 0 with an empty stderr). */
export async function ok<T>(project: string, fn: (engine: Engine) => Promise<T>): Promise<T> {
  const { result, warnings } = await withEngine(project, fn);
  expect(warnings).toEqual([]);
  return result;
}

/** An operation of a command, as the CLI makes it. */
export interface Operation {
  /** the command it stands for, named in a failure */
  command: string;
  run: (engine: Engine) => Promise<unknown>;
}

/** The SemsearchError `operation` fails with (what the CLI reports: exit code, code, message, hint); fails the test if it succeeds or throws anything else. */
export async function failure(project: string, operation: Operation): Promise<SemsearchError> {
  const error = await withEngine(project, operation.run).then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error, `${operation.command}: ${error === null ? "succeeded" : String(error)}`).toBeInstanceOf(SemsearchError);
  return error as SemsearchError;
}

/** `objects add -` with `text` on standard input: the add, then the project's indexes (to wait on, or to say indexing goes on). */
export async function addObjects(engine: Engine, text: string) {
  const result = await engine.addObjects([{ stream: Readable.from([Buffer.from(text)]), source: "<stdin>" }], { onProgress: () => {} });
  await engine.listIndexes();
  return result;
}

/** The body of `index create --searchable <fields>` (with `--highlights`). */
export const indexBody = (searchable: string[], highlights = false) => ({
  configuration: { index_type: { name: "text", ...(highlights ? { highlights: { text: true } } : {}) }, fields: { searchable: { allow: searchable } } },
});

/** `search <index> <query> --json` (with `--limit`, `--result-fields`): the page, which must not say the index is still building (a warning). */
export async function search(engine: Engine, index: string, query: string, params: Partial<EngineModule.SearchParams> = {}) {
  engine.prepareSearch(index);
  const page = await engine.search(index, { query, snippets: false, ...params });
  expect(page.building).toBeUndefined();
  return page;
}

/**
 * `index status <id> --wait` (with `--timeout`): the wait, then the build's report, which must have
 * no failed object (exit 7) and, once objects are ready, searchable text in some (else a warning).
 */
export async function waitBuilt(engine: Engine, id: string, timeoutMs?: number) {
  const info = await engine.waitForIndex(id, { onProgress: () => {}, ...(timeoutMs ? { timeoutMs } : {}) });
  const report = await engine.buildReport(id);
  expect(report.errors.count).toBe(0);
  if (info.status.READY > 0) expect(report.withoutText).toBeLessThan(info.status.READY);
  return info;
}

/** Waits until the project's background worker has exited (it exits on its own once idle), asking as `worker status` does. */
export async function workerGone(project: string): Promise<void> {
  await waitFor("the worker to exit", async () => !(await ok(project, (engine) => engine.workerStatus())).running, { intervalMs: 100 });
}
