import { type Logger, type LoggerOptions, pino } from "pino";

export type { Logger };

/** Paths pino redacts on every line: secrets, tokens, auth headers and raw payloads. */
export const REDACT_PATHS: readonly string[] = [
  "password",
  "*.password",
  "token",
  "*.token",
  "apiKey",
  "*.apiKey",
  "api_key",
  "*.api_key",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  "headers.cookie",
  "*.headers.cookie",
  "bearer_token",
  "*.bearer_token",
  "userToken",
  "*.userToken",
  "user_token",
  "*.user_token",
  "subject_token",
  "*.subject_token",
  'headers["x-forwarded-access-token"]',
  '*.headers["x-forwarded-access-token"]',
  "payload",
  "*.payload",
  "raw",
  "*.raw",
];

export interface CreateLoggerOptions {
  service: string;
  level?: string;
  /** Extra pino options (tests may pass a destination through `destination`). */
  destination?: pino.DestinationStream;
}

export function createLogger(options: CreateLoggerOptions): Logger {
  const opts: LoggerOptions = {
    name: options.service,
    level: options.level ?? "info",
    base: { service: options.service },
    redact: { paths: [...REDACT_PATHS], censor: "[REDACTED]" },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  // Synchronous writes to stdout: lines stay in the order they were logged and none are lost
  // when the process exits right after shutdown.
  return pino(opts, options.destination ?? pino.destination({ dest: 1, sync: true }));
}
