import { MetricsEnvShape } from "@tarsy/metrics";
import { parseEnv, ServiceEnvShape } from "@tarsy/runtime";
import { z } from "zod";

export const EnvSchema = z.object({
  ...ServiceEnvShape,
  ...MetricsEnvShape,
  LLM_SERVICE_HOST: z.string().min(1).default("0.0.0.0"),
  LLM_SERVICE_PORT: z.coerce.number().int().min(0).max(65_535).default(50051),
  /**
   * TARSy's configuration directory (optional). When set, llm-service refuses to start while
   * a fallback provider's credential variable is unset in its environment.
   */
  TARSY_CONFIG_DIR: z.string().min(1).optional(),
  /** YAML/JSON script for the scripted backend (optional; requests may carry one inline). */
  LLM_SCRIPT_PATH: z.string().min(1).optional(),
  /**
   * Every request answered from LLM_SCRIPT_PATH, whatever its provider (`pnpm start
   * --llm-script`: a real config tried offline, with no provider key).
   */
  LLM_SCRIPT_ALL_PROVIDERS: z.stringbool().default(false),
  LLM_RETRY_MAX: z.coerce.number().int().min(0).max(10).default(3),
  LLM_RETRY_BASE_DELAY_MS: z.coerce.number().int().min(0).default(1000),
  LLM_RETRY_MAX_DELAY_MS: z.coerce.number().int().min(0).default(10_000),
  /** Largest GenerateRequest accepted: the whole conversation travels in every call. */
  LLM_MAX_REQUEST_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024),
});
export type Env = z.infer<typeof EnvSchema>;

export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  return parseEnv(EnvSchema, source);
}

/**
 * The variables the config's provider entries name (`api_key_env`, credentials files), checked
 * at start when TARSY_CONFIG_DIR is set.
 */
export function configEnv(): Readonly<Record<string, string | undefined>> {
  return { ...process.env };
}

/**
 * Provider API keys are read from the environment variable each request's config names
 * (api_key_env), at call time, and only here.
 */
export function envSecretLookup(source: Record<string, string | undefined> = process.env) {
  return (name: string): string | undefined => source[name];
}
