/**
 * Resolves like `promise`, or rejects with `reason()` (default: the signal's reason) as soon
 * as `signal` aborts. `promise` itself runs on (it may be shared with other callers).
 */
export function abortable<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  reason: () => unknown = () => signal?.reason,
): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(reason());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reason());
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}
