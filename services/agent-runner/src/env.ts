import { NatsEnvShape } from "@tarsy/bus";
import { DEFAULT_CONFIG_DIR } from "@tarsy/config";
import { MetricsEnvShape } from "@tarsy/metrics";
import { parseEnv } from "@tarsy/runtime";
import { z } from "zod";

export const EnvSchema = z.object({
  ...NatsEnvShape,
  ...MetricsEnvShape,
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal"]).default("info"),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
  /** Postgres connection URL. */
  DATABASE_URL: z.string().min(1),
  /** host:port of llm-service. */
  LLM_SERVICE_ADDRESS: z.string().min(1).default("127.0.0.1:50051"),
  /** Directory with tarsy.yaml and llm-providers.yaml. */
  TARSY_CONFIG_DIR: z.string().min(1).default(DEFAULT_CONFIG_DIR),
  /** Executions this process runs at once. */
  RUNNER_CONCURRENCY: z.coerce.number().int().positive().default(5),
  /** On SIGTERM, how long running executions may continue before they are handed back. */
  RUNNER_SHUTDOWN_GRACE_MS: z.coerce.number().int().nonnegative().default(20_000),
  /** Create/update streams and consumers at start (off when a deploy step provisions them). */
  RUNNER_PROVISION: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true"),
  /** Name of this runner on execution rows (default: hostname-pid). */
  RUNNER_ID: z.string().min(1).optional(),
});
export type Env = z.infer<typeof EnvSchema>;

export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  return parseEnv(EnvSchema, source);
}

/** The variables config interpolation (`{{.VAR}}`, `${VAR}`) may read. */
export function configEnv(): Readonly<Record<string, string | undefined>> {
  return { ...process.env };
}
