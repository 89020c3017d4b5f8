export { abortable } from "./abortable.ts";
export { type ConfigWarningLike, logConfigWarnings } from "./config-warnings.ts";
export { EnvError, LOG_LEVELS, parseEnv, ServiceEnvShape } from "./env.ts";
export { type RunningService, type RunServiceOptions, runService } from "./lifecycle.ts";
export { type CreateLoggerOptions, createLogger, type Logger, REDACT_PATHS } from "./logger.ts";
export { withTimeout } from "./timeout.ts";
