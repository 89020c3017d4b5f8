import { NatsEnvShape } from "@tarsy/bus";
import { parseEnv } from "@tarsy/runtime";
import { z } from "zod";

const list = z
  .string()
  .default("")
  .transform((s) =>
    s
      .split(",")
      .map((v) => v.trim())
      .filter(Boolean),
  );

export const EnvSchema = z.object({
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal"]).default("info"),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
  RELAY_HOST: z.string().default("0.0.0.0"),
  RELAY_PORT: z.coerce.number().int().min(0).max(65535).default(8081),
  ...NatsEnvShape,
  /** Comma-separated origins allowed to open a WebSocket; empty means same-origin only; `*` any. */
  RELAY_ALLOWED_ORIGINS: list,
  RELAY_CATCHUP_LIMIT: z.coerce.number().int().positive().default(200),
  RELAY_MAX_SUBSCRIPTIONS: z.coerce.number().int().positive().default(100),
  RELAY_SEND_BUFFER_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(4 * 1024 * 1024),
  RELAY_SLOW_CLIENT_GRACE_MS: z.coerce.number().int().positive().default(10_000),
  RELAY_HEARTBEAT_MS: z.coerce.number().int().positive().default(30_000),
  RELAY_MAX_FRAME_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(64 * 1024),
});
export type Env = z.infer<typeof EnvSchema>;

export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  return parseEnv(EnvSchema, source);
}
