/**
 * `semsearch worker`: the indexer in the foreground, for systemd or a container. It indexes what
 * commands add while it runs (no background worker is started beside it), refuses a second worker,
 * logs on stderr only, and on SIGTERM commits its batch, releases the project and exits 0.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, ROOT, SAMPLE, cliJson, runCli, tempProject, userEnv } from "../helpers/cli.js";
import { waitFor, within } from "../helpers/wait.js";

const running: { kill: (signal: NodeJS.Signals) => boolean }[] = [];
afterEach(() => {
  for (const child of running.splice(0)) child.kill("SIGKILL");
});

function startWorker(project: string, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [BIN, "--project", project, "worker", "--poll-ms", "100"], { cwd: ROOT, env: userEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  running.push(child);
  const out = { stdout: "", stderr: "" };
  child.stdout.on("data", (chunk: Buffer) => (out.stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (out.stderr += chunk.toString()));
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal)));
  return { child, out, exited };
}

describe("semsearch worker (foreground)", () => {
  it("indexes what commands add while it runs, alone; refuses a second worker; stops on SIGTERM with exit 0", async () => {
    const project = tempProject(); // (not there yet: the worker makes it)
    const worker = startWorker(project);
    await waitFor("the worker to start", () => worker.out.stderr.includes("worker running in the foreground"));
    await cliJson(project, ["objects", "add", SAMPLE]);
    const { id } = (await cliJson(project, ["index", "create", "--searchable", "title,body"])) as { id: string };
    const status = (await cliJson(project, ["index", "status", id, "--wait"])) as { status: Record<string, number> };
    expect(status.status).toMatchObject({ READY: 40, ERROR: 0 });
    expect(existsSync(path.join(project, "worker.log"))).toBe(false); // no background worker was started
    expect(worker.out.stderr).toContain(`${id}: indexed 40 objects`);

    const second = await runCli(["--project", project, "--json", "worker"]);
    expect(second.exitCode).toBe(5);
    expect(JSON.parse(second.stderr).errors[0].code).toBe("WORKER_RUNNING");

    await cliJson(project, ["objects", "add", "-"], { input: '{"id":"late","title":"A late arrival","body":"Added while the worker idles."}' });
    const later = (await cliJson(project, ["index", "status", id, "--wait"])) as { status: Record<string, number> };
    expect(later.status).toMatchObject({ READY: 41 });

    const state = (await cliJson(project, ["worker", "status"])) as { running: boolean; log: string; state?: { foreground?: boolean } };
    expect(state).toMatchObject({ running: true, log: "stderr", state: { foreground: true } }); // (it logs on stderr, not in worker.log)
    worker.child.kill("SIGTERM");
    expect(await within("the worker to exit", worker.exited)).toBe(0);
    expect(worker.out.stdout).toBe("");
    expect(worker.out.stderr).toContain("worker stopped");
    expect(((await cliJson(project, ["worker", "status"])) as { running: boolean }).running).toBe(false);
  });

  it("killed while it indexes, its work is resumed by the next command's background worker", async () => {
    const project = tempProject();
    await cliJson(project, ["objects", "add", SAMPLE]);
    const worker = startWorker(project, { SEMSEARCH_FAILPOINT: "worker:rows" }); // (SIGKILLs itself with rows embedded, before their commit)
    await waitFor("the worker to start", () => worker.out.stderr.includes("worker running in the foreground"));
    const { id } = (await cliJson(project, ["index", "create", "--searchable", "title,body"])) as { id: string };
    expect(await within("the worker to die", worker.exited)).toBe("SIGKILL");
    const status = (await cliJson(project, ["index", "status", id, "--wait"])) as { status: Record<string, number> };
    expect(status.status).toMatchObject({ READY: 40, ERROR: 0 });
    expect(existsSync(path.join(project, "worker.log"))).toBe(true); // resumed by a background worker
  });
});
