import type { Logger } from "./logger.ts";

/** A warning from loading the configuration (`@tarsy/config`'s `ConfigWarning`). */
export interface ConfigWarningLike {
  file: string;
  path: string;
  message: string;
}

/** Logs the configuration's warnings at start-up, one line each, the same in every service. */
export function logConfigWarnings(logger: Logger, warnings: readonly ConfigWarningLike[]): void {
  for (const w of warnings) logger.warn({ file: w.file, path: w.path }, w.message);
}
