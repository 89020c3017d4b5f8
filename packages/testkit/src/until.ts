/** What a probe returns while the thing it waits for is not there yet (any falsy value counts). */
export type NotYet = null | undefined | false;

export interface UntilOptions {
  /** What is awaited, for the error on timeout: "timed out waiting for <what>". */
  what: string;
  /** How long to poll before failing; 30 s unless told. */
  timeoutMs?: number;
  /** The pause between two probes; 50 ms unless told. */
  intervalMs?: number;
  /**
   * Take an error thrown by the probe as "not yet" and poll on (for a probe that fails until
   * what it talks to is up); the last one is named on timeout. Unless set, it fails at once.
   */
  retryErrors?: boolean;
}

const describe = (value: unknown): string => {
  if (value instanceof Error) return value.message;
  if (typeof value === "string") return JSON.stringify(value);
  return String(value);
};

/**
 * Polls `probe` until it returns a truthy value, and resolves with that value; after `timeoutMs` it rejects with an error naming `what` and the last
 * value (or error) the probe gave. The probe always runs once more after the deadline.
 */
export async function until<T>(
  probe: () => T | NotYet | PromiseLike<T | NotYet>,
  options: UntilOptions,
): Promise<T> {
  const { what, timeoutMs = 30_000, intervalMs = 50, retryErrors = false } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let last: unknown;
    try {
      const value = await probe();
      if (value) return value as T;
      last = value;
    } catch (error) {
      if (!retryErrors) throw error;
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting for ${what} after ${timeoutMs} ms (last seen: ${describe(last)})`,
        { cause: last },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Whether a process with this pid exists (signal 0: nothing is sent, only checked). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ESRCH") return false;
    // Alive, but not ours to signal.
    if (code === "EPERM") return true;
    throw error;
  }
}
