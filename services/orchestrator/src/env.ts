import { hostname } from "node:os";
import { NatsEnvShape } from "@tarsy/bus";
import { MetricsEnvShape } from "@tarsy/metrics";
import { parseEnv, ServiceEnvShape } from "@tarsy/runtime";
import { z } from "zod";

export const EnvSchema = z.object({
  ...ServiceEnvShape,
  ...NatsEnvShape,
  ...MetricsEnvShape,
  DATABASE_URL: z.string().min(1, "DATABASE_URL is required (postgres://…)"),
  TARSY_CONFIG_DIR: z.string().default("deploy/config"),
  POD_ID: z.string().min(1).default(hostname()),
  ORCHESTRATOR_CONCURRENCY: z.coerce.number().int().positive().default(8),
  ORCHESTRATOR_SWEEP_INTERVAL_MS: z.coerce.number().int().positive().default(5_000),
  ORCHESTRATOR_OUTBOX_INTERVAL_MS: z.coerce.number().int().positive().default(1_000),
  /** How often users' tokens past their expiry are wiped (per-user MCP credentials). */
  ORCHESTRATOR_TOKEN_JANITOR_INTERVAL_MS: z.coerce.number().int().positive().default(60_000),
});
export type Env = z.infer<typeof EnvSchema>;

export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  return parseEnv(EnvSchema, source);
}

/** Variables for `{{.VAR}}` in tarsy.yaml and llm-providers.yaml. */
export function configEnv(): Readonly<Record<string, string | undefined>> {
  return { ...process.env };
}
