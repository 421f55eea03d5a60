/**
 * Waiting on a condition instead of sleeping: a test that sleeps a fixed time fails on a loaded
 * machine, or waits longer than it needs on an idle one.
 */

/**
 * Resolves once `condition` holds, checking it every `intervalMs`; rejects naming `what` after
 * `timeoutMs` (default 60 s: far longer than anything needs on an idle machine, so that only a real
 * hang fails).
 */
export async function waitFor(what: string, condition: () => boolean | Promise<boolean>, options: { timeoutMs?: number; intervalMs?: number } = {}): Promise<void> {
  const { timeoutMs = 60_000, intervalMs = 50 } = options;
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** `promise`, or a rejection naming `what` if it has not settled within `timeoutMs` (default 60 s). */
export async function within<T>(what: string, promise: Promise<T>, timeoutMs = 60_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
