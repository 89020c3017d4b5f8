import { hostname } from "node:os";
import { NatsEnvShape } from "@tarsy/bus";
import { MetricsEnvShape } from "@tarsy/metrics";
import { parseEnv, ServiceEnvShape } from "@tarsy/runtime";
import { z } from "zod";

const ms = z.coerce.number().int().positive();

export const EnvSchema = z.object({
  ...ServiceEnvShape,
  ...NatsEnvShape,
  ...MetricsEnvShape,
  DATABASE_URL: z.string().min(1, "DATABASE_URL is required (postgres://…)"),
  TARSY_CONFIG_DIR: z.string().default("deploy/config"),
  POD_ID: z.string().min(1).default(hostname()),
  /** Session events handled at once. */
  NOTIFIER_CONCURRENCY: z.coerce.number().int().positive().default(4),
  /** How long one send may hold its delivery before another replica treats it as cut short. */
  NOTIFIER_LEASE_MS: ms.default(60_000),
  /** Attempts per delivery before it is marked failed. */
  NOTIFIER_MAX_ATTEMPTS: z.coerce.number().int().positive().default(8),
  /** Delay before the second attempt; doubles per attempt up to NOTIFIER_RETRY_MAX_MS. */
  NOTIFIER_RETRY_INITIAL_MS: ms.default(5_000),
  NOTIFIER_RETRY_MAX_MS: ms.default(300_000),
  /** How often due retries and cut-short sends are looked for. */
  NOTIFIER_SWEEP_INTERVAL_MS: ms.default(2_000),
  /** One HTTP request to Slack or a webhook. */
  NOTIFIER_REQUEST_TIMEOUT_MS: ms.default(10_000),
});
export type Env = z.infer<typeof EnvSchema>;

export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  return parseEnv(EnvSchema, source);
}

/** Variables for `{{.VAR}}` in tarsy.yaml, and the Slack token and webhook secrets. */
export function configEnv(): Readonly<Record<string, string | undefined>> {
  return { ...process.env };
}
