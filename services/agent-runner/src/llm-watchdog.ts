import { LlmFirstChunkTimeoutError, LlmStreamStalledError } from "./errors.ts";

export interface StreamLimits {
  firstChunkTimeoutMs: number;
  stallTimeoutMs: number;
}

/**
 * Runs one streamed call under two timers: until the first chunk and between chunks. When
 * one fires the call is aborted (through the signal given to `open`) and the iteration
 * throws LlmFirstChunkTimeoutError / LlmStreamStalledError. Time the consumer spends on a
 * chunk is not counted.
 */
export async function* watchStream<T>(
  open: (signal: AbortSignal) => AsyncIterable<T>,
  limits: StreamLimits,
  signal: AbortSignal,
): AsyncGenerator<T> {
  const watchdog = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const arm = (error: Error, ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(() => watchdog.abort(error), ms);
  };
  arm(new LlmFirstChunkTimeoutError(limits.firstChunkTimeoutMs), limits.firstChunkTimeoutMs);
  try {
    for await (const chunk of open(AbortSignal.any([signal, watchdog.signal]))) {
      clearTimeout(timer);
      yield chunk;
      arm(new LlmStreamStalledError(limits.stallTimeoutMs), limits.stallTimeoutMs);
    }
  } catch (err) {
    if (watchdog.signal.aborted && !signal.aborted) throw watchdog.signal.reason;
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
