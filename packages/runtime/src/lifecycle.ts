import type { Logger } from "./logger.ts";

export interface RunningService {
  /** Stop taking work, finish or hand back what is in flight, close connections. */
  stop(): Promise<void>;
}

export interface RunServiceOptions {
  logger: Logger;
  /** How long shutdown may take before the process exits anyway. */
  shutdownTimeoutMs?: number;
  signals?: NodeJS.Signals[];
  exit?: (code: number) => void;
}

/**
 * Starts a service and wires graceful shutdown on SIGTERM/SIGINT.
 * Returns a function that triggers the same shutdown (for tests and embedding).
 */
export async function runService(
  start: () => Promise<RunningService>,
  options: RunServiceOptions,
): Promise<() => Promise<void>> {
  const { logger } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const timeoutMs = options.shutdownTimeoutMs ?? 30_000;
  let service: RunningService | undefined;
  let stopping: Promise<void> | undefined;
  const shutdown = (reason: string): Promise<void> => {
    if (stopping) return stopping;
    logger.info({ reason }, "shutting down");
    const timer = setTimeout(() => {
      logger.error({ timeoutMs }, "shutdown timed out; exiting");
      exit(1);
    }, timeoutMs);
    timer.unref();
    const current = service;
    stopping = (current ? current.stop() : Promise.resolve())
      .then(() => {
        clearTimeout(timer);
        logger.info("service stopped");
      })
      .catch((err: unknown) => {
        clearTimeout(timer);
        logger.error({ err }, "error during shutdown");
        throw err;
      });
    return stopping;
  };

  for (const signal of options.signals ?? ["SIGTERM", "SIGINT"]) {
    process.once(signal, () => {
      shutdown(signal).then(
        () => exit(0),
        () => exit(1),
      );
    });
  }
  // Signals are handled from the first moment, so a SIGTERM never kills the process unhandled.
  service = await start();
  if (stopping) {
    // A signal arrived while starting: stop what was started.
    await service.stop();
  } else {
    logger.info("service started");
  }
  return () => shutdown("requested");
}
