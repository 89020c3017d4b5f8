import { NatsEnvShape } from "@tarsy/bus";
import { DEFAULT_CONFIG_DIR } from "@tarsy/config";
import { MetricsEnvShape } from "@tarsy/metrics";
import { parseEnv, ServiceEnvShape } from "@tarsy/runtime";
import { z } from "zod";
import type { LlmRetryPolicy } from "./llm-retry.ts";

export const EnvSchema = z.object({
  ...ServiceEnvShape,
  ...NatsEnvShape,
  ...MetricsEnvShape,
  /** Postgres connection URL. */
  DATABASE_URL: z.string().min(1),
  /**
   * gRPC target of llm-service: "host:port", "dns:///host:port" (every address of the name,
   * e.g. a headless Service) or "ipv4:host:port,host:port"; calls go round-robin.
   */
  LLM_SERVICE_ADDRESS: z.string().min(1).default("127.0.0.1:50051"),
  /** How long one LLM call keeps retrying while llm-service is unreachable or cuts streams. */
  LLM_SERVICE_RETRY_BUDGET_MS: z.coerce.number().int().nonnegative().default(300_000),
  /** First backoff between those retries (doubles, with jitter, up to the max). */
  LLM_SERVICE_RETRY_BASE_DELAY_MS: z.coerce.number().int().positive().default(250),
  LLM_SERVICE_RETRY_MAX_DELAY_MS: z.coerce.number().int().positive().default(5_000),
  /** An LLM call with no chunk after this long is abandoned and retried. */
  LLM_FIRST_CHUNK_TIMEOUT_MS: z.coerce.number().int().positive().default(120_000),
  /** An LLM stream silent this long between chunks is abandoned and retried. */
  LLM_STALL_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  /** Timeout of the llm-service health check behind `/ready`. */
  LLM_HEALTH_TIMEOUT_MS: z.coerce.number().int().positive().default(1_000),
  /** Directory with tarsy.yaml and llm-providers.yaml. */
  TARSY_CONFIG_DIR: z.string().min(1).default(DEFAULT_CONFIG_DIR),
  /** Executions this process runs at once. */
  RUNNER_CONCURRENCY: z.coerce.number().int().positive().default(5),
  /** On SIGTERM, how long running executions may continue before they are handed back. */
  RUNNER_SHUTDOWN_GRACE_MS: z.coerce.number().int().nonnegative().default(20_000),
  /** Name of this runner on execution rows (default: hostname-pid). */
  RUNNER_ID: z.string().min(1).optional(),
  /**
   * A fixed time (ISO 8601) for the calendar context of the prompts, for reproducible runs
   * (golden files); unset: the clock.
   */
  RUNNER_PROMPT_TIME: z.iso.datetime().optional(),
});
export type Env = z.infer<typeof EnvSchema>;

/** The LLM call retry policy the environment sets. */
export function llmRetryPolicy(env: Env): LlmRetryPolicy {
  return {
    budgetMs: env.LLM_SERVICE_RETRY_BUDGET_MS,
    baseDelayMs: env.LLM_SERVICE_RETRY_BASE_DELAY_MS,
    maxDelayMs: env.LLM_SERVICE_RETRY_MAX_DELAY_MS,
    firstChunkTimeoutMs: env.LLM_FIRST_CHUNK_TIMEOUT_MS,
    stallTimeoutMs: env.LLM_STALL_TIMEOUT_MS,
  };
}

export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  return parseEnv(EnvSchema, source);
}

/** The variables config interpolation (`{{.VAR}}`) may read. */
export function configEnv(): Readonly<Record<string, string | undefined>> {
  return { ...process.env };
}
