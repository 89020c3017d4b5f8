export { abortable } from "./abortable.ts";
export { EnvError, parseEnv } from "./env.ts";
export { type RunningService, type RunServiceOptions, runService } from "./lifecycle.ts";
export { type CreateLoggerOptions, createLogger, type Logger, REDACT_PATHS } from "./logger.ts";
export { withTimeout } from "./timeout.ts";
