/**
 * onnxruntime's telemetry is turned off through the process's real environment, which only the main
 * thread can change: the main thread sets the variable, a thread refuses to load onnxruntime unless
 * it was set before the thread started (test/e2e/footprint.test.ts shows the effect on files and
 * long arguments).
 */
import path from "node:path";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { disableRuntimeTelemetry, TELEMETRY_VARIABLE } from "../../../src/engine/embedding/runtime-telemetry.js";
import { ROOT } from "../../helpers/cli.js";

const BUILT = path.join(ROOT, "dist", "engine", "embedding", "runtime-telemetry.js");

/** What disableRuntimeTelemetry() does in a new thread whose environment is `env`. */
function inThread(env: Record<string, string>): Promise<string> {
  const code = `import(${JSON.stringify(BUILT)}).then((m) => { try { m.disableRuntimeTelemetry(); return "ok"; } catch (e) { return e.code; } }).then((r) => require("node:worker_threads").parentPort.postMessage(r));`;
  const worker = new Worker(code, { eval: true, env });
  return new Promise((resolve, reject) => {
    worker.once("message", (message: string) => void worker.terminate().then(() => resolve(message)));
    worker.once("error", reject);
  });
}

describe("disableRuntimeTelemetry", () => {
  const saved = process.env[TELEMETRY_VARIABLE];
  afterEach(() => {
    if (saved === undefined) delete process.env[TELEMETRY_VARIABLE];
    else process.env[TELEMETRY_VARIABLE] = saved;
  });

  it("sets ORT_DISABLE_TELEMETRY=1 in the main thread, over a value the user gave", () => {
    process.env[TELEMETRY_VARIABLE] = "0";
    disableRuntimeTelemetry();
    expect(process.env[TELEMETRY_VARIABLE]).toBe("1");
  });

  it("in a thread, passes when the variable was set before the thread started, and refuses otherwise", async () => {
    expect(await inThread({ [TELEMETRY_VARIABLE]: "1" })).toBe("ok");
    expect(await inThread({})).toBe("RUNTIME_TELEMETRY_ON");
    expect(await inThread({ [TELEMETRY_VARIABLE]: "0" })).toBe("RUNTIME_TELEMETRY_ON");
  });
});
