/** The memory this process may use: the machine's, Node's own limit, or the least limit of the cgroups holding it. */
import { mkdirSync, writeFileSync } from "node:fs";
import { totalmem } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cgroupLimit, processMemory } from "../../../src/engine/process-memory.js";
import { tempDir } from "../../helpers/temp.js";

/** A file system root holding only /proc/self/cgroup and the given files. */
function fakeRoot(cgroup: string, files: Record<string, string>): string {
  const root = tempDir();
  for (const [file, text] of Object.entries({ "proc/self/cgroup": cgroup, ...files })) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  return root;
}

const GiB = 1024 ** 3;

describe("cgroupLimit", () => {
  it("cgroup v1: the hierarchy's least limit (hierarchical_memory_limit), set above the process's own group", () => {
    const root = fakeRoot("4:memory:/slice/service\n3:cpu,cpuacct:/\n", {
      "sys/fs/cgroup/memory/slice/service/memory.limit_in_bytes": "9223372036854771712\n",
      "sys/fs/cgroup/memory/slice/service/memory.stat": `cache 0\nhierarchical_memory_limit ${2 * GiB}\nrss 0\n`,
    });
    expect(cgroupLimit(root)).toBe(2 * GiB);
  });

  it("cgroup v1 in a container without its own namespace: the container's root group", () => {
    const root = fakeRoot("4:memory:/docker/abc\n", { "sys/fs/cgroup/memory/memory.stat": `hierarchical_memory_limit ${GiB}\n` });
    expect(cgroupLimit(root)).toBe(GiB);
  });

  it("cgroup v2: the least memory.max of the groups from the process's up to the root (max: none)", () => {
    const root = fakeRoot("0::/slice/service\n", {
      "sys/fs/cgroup/memory.max": "max\n",
      "sys/fs/cgroup/slice/memory.max": `${3 * GiB}\n`,
      "sys/fs/cgroup/slice/service/memory.max": `${5 * GiB}\n`,
    });
    expect(cgroupLimit(root)).toBe(3 * GiB);
  });

  it("none when no group sets one, or nothing can be read", () => {
    expect(cgroupLimit(fakeRoot("0::/a\n", { "sys/fs/cgroup/memory.max": "max\n", "sys/fs/cgroup/a/memory.max": "max\n" }))).toBeNull();
    expect(cgroupLimit(fakeRoot("", {}))).toBeNull();
    expect(cgroupLimit(path.join(tempDir(), "missing"))).toBeNull();
  });
});

describe("processMemory", () => {
  it("is at most the machine's memory, and at most a limit the cgroups set", () => {
    expect(processMemory()).toBeGreaterThan(0);
    expect(processMemory()).toBeLessThanOrEqual(totalmem());
    const limited = fakeRoot("0::/a\n", { "sys/fs/cgroup/a/memory.max": `${64 * 1024 ** 2}\n` });
    expect(processMemory(limited)).toBe(Math.min(64 * 1024 ** 2, processMemory()));
  });
});
