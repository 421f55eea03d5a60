/**
 * Lease takeover for `npm run bench:s3`, on a bucket project of its own with
 * SEMSEARCH_LEASE_SECONDS=5: a writer (`objects add` of the corpus file) is SIGKILLed once the
 * bucket shows it holding the write lease (its pid in the newest token, not released), and another
 * writer (`objects add` of one object) is timed from the kill to its exit 0. It waits for the lease,
 * takes it over, fences the tables and rolls the killed add back. Beside it, the same one-object add
 * when nobody holds the lease: the difference is what the takeover costs. The processes reach the S3
 * server directly, and the bench reads the lease's records with its own client.
 *
 * Two ways the taker may learn that the holder is gone (src/engine/project-locks.ts `holderDead`):
 * - same host: the holder's host name and boot match the taker's and its pid is gone: taken at once;
 * - another host: any other holder is dead only once its lease expires (5 s after its last renewal,
 *   renewed every third of that). The killed holder is run in a UTS namespace of its own
 *   (`unshare --uts`, with another host name), which is how semsearch tells machines apart; where
 *   `unshare` cannot (not root, no namespaces), this figure is left out and the report says why.
 */
import { spawn, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import type { Bucket } from "./s3-setup.js";
import { mustRun, runCli, tracked, waitUntil } from "./s3-setup.js";

const LEASE_SECONDS = "5";
const OTHER_HOST = ["unshare", "--uts", "sh", "-c", 'hostname semsearch-bench-elsewhere && exec "$0" "$@"'];

export interface TakeoverResult {
  lease_seconds: number;
  /** A one-object add with the lease free, each run, ms (they take turns with the takeovers). */
  uncontended_ms: number[];
  /** From SIGKILL of the holder until the taker's add exited 0, each run, ms. */
  same_host_ms: number[];
  /** The same with the holder on "another host"; empty when it could not be run (`other_host_note` says why). */
  other_host_ms: number[];
  other_host_note?: string;
}

/** Whether `unshare --uts` can give a process its own host name here. */
function canUnshare(): string | null {
  const probe = spawnSync(OTHER_HOST[0] as string, [...OTHER_HOST.slice(1), "true"], { encoding: "utf8" });
  return probe.status === 0 ? null : `unshare --uts failed (${(probe.stderr || probe.error?.message || "").trim().slice(0, 200)}): run as root for the other-host figure`;
}

/** One takeover: the holder (optionally "elsewhere") is killed while it holds the lease; the taker's wait, from the kill. */
async function takeover(bin: string, bucket: Bucket, prefix: string, holderFile: string, takerFile: string, env: NodeJS.ProcessEnv, elsewhere: boolean): Promise<number> {
  const project = bucket.uri(prefix);
  const command = elsewhere ? OTHER_HOST : [process.execPath];
  const args = [...command.slice(1), ...(elsewhere ? [process.execPath] : []), bin, "--project", project, "objects", "add", holderFile];
  for (let attempt = 1; ; attempt++) {
    const holder = tracked(spawn(command[0] as string, args, { env, stdio: "ignore" }));
    const exited = new Promise((resolve) => holder.once("exit", resolve));
    await waitUntil("the holder to take the write lease", async () => {
      if (holder.exitCode !== null) throw new Error(`the holder (objects add) exited ${holder.exitCode} before it was seen holding the lease`);
      return (await bucket.writeLease(prefix))?.pid === holder.pid;
    }, 120_000, 20);
    holder.kill("SIGKILL");
    const killed = performance.now();
    await exited;
    // Killed just after it released the lease, the next add would find it free: not a takeover, try again.
    if ((await bucket.writeLease(prefix))?.pid !== holder.pid) {
      if (attempt === 3) throw new Error("the holder kept finishing its add before it was killed: give it more objects");
      continue;
    }
    const taker = await runCli(bin, ["--project", project, "objects", "add", takerFile], env);
    if (taker.code !== 0) throw new Error(`the taker's add exited ${taker.code}:\n${taker.stderr.slice(-2000)}`);
    return performance.now() - killed;
  }
}

/** `runs` of each, taking turns: a free add, a takeover from a holder on this host, one from "another host". */
export async function measureTakeover(bin: string, bucket: Bucket, holderFile: string, dir: string, baseEnv: NodeJS.ProcessEnv, runs: number): Promise<TakeoverResult> {
  const env = { ...baseEnv, SEMSEARCH_LEASE_SECONDS: LEASE_SECONDS };
  const prefix = "lease";
  let n = 0;
  const oneObject = () => {
    const file = path.join(dir, `lease-object-${++n}.jsonl`);
    writeFileSync(file, `${JSON.stringify({ id: `lease-${n}`, text: "an object added by the lease bench" })}\n`);
    return file;
  };
  const uncontended = async () => (await mustRun(bin, ["--project", bucket.uri(prefix), "objects", "add", oneObject()], env)).ms;
  await uncontended(); // makes the project (its first write also checks the store): not measured
  const why = canUnshare();
  const result: TakeoverResult = { lease_seconds: Number(LEASE_SECONDS), uncontended_ms: [], same_host_ms: [], other_host_ms: [], ...(why === null ? {} : { other_host_note: why }) };
  for (let i = 0; i < runs; i++) {
    result.uncontended_ms.push(Math.round(await uncontended()));
    result.same_host_ms.push(Math.round(await takeover(bin, bucket, prefix, holderFile, oneObject(), env, false)));
    if (why === null) result.other_host_ms.push(Math.round(await takeover(bin, bucket, prefix, holderFile, oneObject(), env, true)));
  }
  return result;
}
