/** The slice of a pino logger packages/db uses (so callers pass their child logger). */
export interface DbLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
