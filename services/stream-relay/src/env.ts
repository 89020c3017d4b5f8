import { NatsEnvShape } from "@tarsy/bus";
import { parseEnv, ServiceEnvShape } from "@tarsy/runtime";
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
  ...ServiceEnvShape,
  ...NatsEnvShape,
  /** The WebSocket endpoint, and `/metrics`, `/health` and `/ready`, on one port. */
  RELAY_HOST: z.string().default("0.0.0.0"),
  /** tarsy.yaml's directory: the relay reads its `authorization` section. */
  TARSY_CONFIG_DIR: z.string().default("deploy/config"),
  /** Postgres, read while authorization is on: API tokens and each session's project. */
  DATABASE_URL: z.string().min(1).default("postgres://postgres@127.0.0.1:5432/tarsy"),
  DATABASE_POOL_SIZE: z.coerce.number().int().positive().default(4),
  RELAY_PORT: z.coerce.number().int().min(0).max(65535).default(8081),
  /** Comma-separated origins allowed to open a WebSocket; empty means same-origin only; `*` any. */
  RELAY_ALLOWED_ORIGINS: list,
  /** Most events one catch-up (or the replay on subscribe) sends; past it: catchup.overflow. */
  RELAY_CATCHUP_LIMIT: z.coerce.number().int().positive().default(200),
  RELAY_MAX_SUBSCRIPTIONS: z.coerce.number().int().positive().default(100),
  RELAY_SEND_BUFFER_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(4 * 1024 * 1024),
  RELAY_SLOW_CLIENT_GRACE_MS: z.coerce.number().int().positive().default(10_000),
  RELAY_HEARTBEAT_MS: z.coerce.number().int().positive().default(30_000),
  /** Control messages a client may send per second (token bucket rate). */
  RELAY_CONTROL_RATE_PER_SEC: z.coerce.number().positive().default(20),
  /** Control messages a client may send at once; also the most actions queued per client. */
  RELAY_CONTROL_BURST: z.coerce.number().int().positive().default(60),
  /** Messages over the rate limit dropped (after one error frame) before closing with 1008. */
  RELAY_CONTROL_VIOLATIONS_BEFORE_CLOSE: z.coerce.number().int().nonnegative().default(20),
  /** Catch-ups of distinct channels waiting or running per client. */
  RELAY_MAX_PENDING_CATCHUPS: z.coerce.number().int().positive().default(8),
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

/** Variables the config files may interpolate (`{{.VAR}}`). */
export function configEnv(): Readonly<Record<string, string | undefined>> {
  return { ...process.env };
}
