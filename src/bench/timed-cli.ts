/** Running the CLI under /usr/bin/time -v, for the benches that report a command's wall time and peak memory. */
import { spawnSync } from "node:child_process";

/** Runs `semsearch --project <project> --json <args>`; its elapsed seconds and peak RSS in MB. Throws when it fails. */
export function timedCli(bin: string, project: string, args: string[]): { seconds: number; peakMb: number } {
  const run = spawnSync("/usr/bin/time", ["-v", process.execPath, bin, "--project", project, "--json", ...args], { encoding: "utf8", maxBuffer: 1 << 30 });
  if (run.status !== 0) throw new Error(`semsearch ${args.join(" ")} failed: ${run.stderr}`);
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(run.stderr);
  const wall = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)/.exec(run.stderr);
  const seconds = wall ? Number(wall[1] ?? 0) * 3600 + Number(wall[2]) * 60 + Number(wall[3]) : Number.NaN;
  return { seconds, peakMb: rss ? Math.round(Number(rss[1]) / 1024) : Number.NaN };
}
