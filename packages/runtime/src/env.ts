import { z } from "zod";

export class EnvError extends Error {
  readonly code = "env_invalid" as const;
  constructor(readonly issues: string[]) {
    super(`invalid environment:\n  ${issues.join("\n  ")}`);
    this.name = "EnvError";
  }
}

/**
 * Parses an environment with a zod object schema once, at start-up.
 * Every problem is reported at once, each naming the variable.
 */
export function parseEnv<S extends z.ZodType>(
  schema: S,
  source: Record<string, string | undefined>,
): z.infer<S> {
  const result = schema.safeParse(source);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => {
    const variable = issue.path.join(".") || "(environment)";
    return `${variable}: ${issue.message}`;
  });
  throw new EnvError(issues);
}

/** pino's levels; `silent` turns logging off. */
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;

/**
 * The variables every service reads, spread first into its `env.ts` schema; the NATS shape
 * (`NatsEnvShape`, `@tarsy/bus`) and the ops server's (`MetricsEnvShape`, `@tarsy/metrics`)
 * follow for the services that use them.
 */
export const ServiceEnvShape = {
  LOG_LEVEL: z.enum(LOG_LEVELS).default("info"),
  /** How long shutdown may take before the process exits anyway. */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
};
