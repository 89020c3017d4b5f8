import { parseEnv } from "@tarsy/runtime";
import { z } from "zod";

/** An optional variable; set but empty counts as unset. */
const optional = z
  .string()
  .optional()
  .transform((v) => v || undefined);

export const StartEnvSchema = z.object({
  /** Unset: an embedded Postgres. */
  DATABASE_URL: optional,
  /** Unset: the server on 127.0.0.1:4222, else a nats-server started here. */
  NATS_URL: optional,
  /** Configuration for real investigations (relative to the repository root). */
  TARSY_CONFIG_DIR: z.string().default("deploy/config"),
  // Any provider key switches `pnpm start` from the demo to real investigations.
  GOOGLE_API_KEY: optional,
  OPENAI_API_KEY: optional,
  ANTHROPIC_API_KEY: optional,
  XAI_API_KEY: optional,
});
export type StartEnv = z.infer<typeof StartEnvSchema>;

export const PROVIDER_KEYS = [
  "GOOGLE_API_KEY",
  "OPENAI_API_KEY",
  "ANTHROPIC_API_KEY",
  "XAI_API_KEY",
] as const satisfies readonly (keyof StartEnv)[];

/** What `pnpm start` reads; every other variable passes through to the services. */
export function loadStartEnv(source: Record<string, string | undefined> = process.env): StartEnv {
  return parseEnv(StartEnvSchema, source);
}

/**
 * The environment of every process the stack starts (the services, an embedded Postgres):
 * all of the stack's own, so that a child finds PATH and HOME and gets what was given to
 * `pnpm start` (provider keys, LOG_LEVEL, any service setting), with the child's own
 * variables on top. Each service parses what it needs in its own env.ts.
 */
export function childEnvironment(own: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  return { ...process.env, ...own };
}
