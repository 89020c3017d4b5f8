import { NatsEnvShape } from "@tarsy/bus";
import { DEFAULT_CONFIG_DIR } from "@tarsy/config";
import { MetricsEnvShape } from "@tarsy/metrics";
import { parseEnv, ServiceEnvShape } from "@tarsy/runtime";
import { z } from "zod";

const ms = (fallback: number) => z.coerce.number().int().positive().default(fallback);
/** Unset or empty (compose's `${VAR:-}`): undefined. */
const optional = z
  .string()
  .optional()
  .transform((v) => (v?.trim() ? v : undefined));

export const EnvSchema = z.object({
  ...ServiceEnvShape,
  ...NatsEnvShape,
  ...MetricsEnvShape,
  /** Directory with tarsy.yaml (mcp_servers) and llm-providers.yaml. */
  TARSY_CONFIG_DIR: z.string().min(1).default(DEFAULT_CONFIG_DIR),
  /** This replica's id in subjects; random when unset. */
  MCP_GATEWAY_REPLICA_ID: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .optional(),
  MCP_INIT_TIMEOUT_MS: ms(30_000),
  MCP_CALL_TIMEOUT_MS: ms(90_000),
  MCP_LIST_TIMEOUT_MS: ms(10_000),
  MCP_HEALTH_INTERVAL_MS: ms(15_000),
  MCP_HEALTH_PING_TIMEOUT_MS: ms(5_000),
  /** An execution's sessions unused this long are closed. */
  MCP_SESSION_IDLE_TIMEOUT_MS: ms(15 * 60_000),
  /**
   * Initialized sessions (stdio: started processes) kept ready per MCP server for the next
   * executions, each handed to one execution only; `mcp_servers.<id>.warm_pool` overrides it.
   * 0 turns the pools off. Two by default: a parallel stage of two agents finds both ready.
   */
  MCP_WARM_POOL_SIZE: z.coerce.number().int().min(0).max(16).default(2),
  /**
   * Per-user tool credentials (`mcp_servers.<id>.auth.mode` forward_user_token or
   * token_exchange): where the sealed user tokens are, and the key that opens them (32 bytes,
   * base64; the same as ingest-api's). Without both, such servers fail closed (or fall back).
   */
  DATABASE_URL: optional,
  TARSY_TOKEN_KEY: optional,
});
export type Env = z.infer<typeof EnvSchema>;

export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  return parseEnv(EnvSchema, source);
}

/**
 * Variables the config files may interpolate (`{{.VAR}}`); also the environment
 * stdio MCP servers inherit (config `env` entries override it).
 */
export function configEnv(): Readonly<Record<string, string | undefined>> {
  return { ...process.env };
}
