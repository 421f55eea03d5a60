/** The memory this process may use: the machine's, or the least limit of the cgroups that hold it. */
import { readFileSync } from "node:fs";
import { totalmem } from "node:os";
import path from "node:path";

function readText(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

/**
 * The least memory limit of the cgroups that hold this process, its own and those above it, on
 * Linux (null where there is none, or nothing to read). Node's constrainedMemory reads the process's
 * own group only, so a service in a limited slice (its own group unlimited) counted the machine's
 * memory. `root` is the file system's root (tests pass another).
 */
export function cgroupLimit(root: string): number | null {
  const limits: number[] = [];
  for (const line of (readText(path.join(root, "proc/self/cgroup")) ?? "").split("\n")) {
    const [, controllers, group] = /^\d+:([^:]*):(\/.*)$/.exec(line) ?? [];
    if (group === undefined) continue;
    if (controllers === "") {
      // cgroup v2: memory.max of every group from this one up to the root ("max": none)
      for (let dir = group; ; dir = path.posix.dirname(dir)) {
        const max = Number(readText(path.join(root, "sys/fs/cgroup", dir, "memory.max"))?.trim());
        if (Number.isSafeInteger(max) && max > 0) limits.push(max);
        if (dir === "/") break;
      }
    } else if (controllers?.split(",").includes("memory")) {
      // cgroup v1: the hierarchy's least limit, as the kernel applies it (in a container without its
      // own cgroup namespace the group's path is the host's, and the container's root group is read)
      const stat = readText(path.join(root, "sys/fs/cgroup/memory", group, "memory.stat")) ?? readText(path.join(root, "sys/fs/cgroup/memory/memory.stat"));
      const limit = Number(/^hierarchical_memory_limit (\d+)$/m.exec(stat ?? "")?.[1]);
      if (Number.isSafeInteger(limit) && limit > 0) limits.push(limit);
    }
  }
  return limits.length > 0 ? Math.min(...limits) : null;
}

/** The memory this process may use: the machine's, or less where a container (cgroup) limits it. */
export function processMemory(root = "/"): number {
  const total = totalmem();
  const limits = [process.constrainedMemory?.(), process.platform === "linux" ? cgroupLimit(root) : null];
  return Math.min(total, ...limits.filter((limit): limit is number => typeof limit === "number" && limit > 0));
}
