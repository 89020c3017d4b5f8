import type { SystemConfig } from "@tarsy/config";
import { z } from "zod";

/** What a runbook client works with, resolved from `system.github` / `system.runbooks`. */
export const RunbookSettingsSchema = z.object({
  allowedDomains: z.array(z.string().min(1)),
  /** Loopback and private ranges may be fetched (internal Git servers, tests). */
  allowPrivateAddresses: z.boolean().default(false),
  cacheTtlMs: z.number().int().positive(),
  /** A repository tree URL whose `.md` files are listed; empty: no listing. */
  repoUrl: z.string().default(""),
  githubApiUrl: z.url({ protocol: /^https?$/ }),
  /** The GitHub token's value (not its variable name); empty or absent: no token. */
  token: z.string().optional(),
  timeoutMs: z.number().int().positive().default(30_000),
  maxBytes: z
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  maxRedirects: z.number().int().nonnegative().default(5),
});
export type RunbookSettingsInput = z.input<typeof RunbookSettingsSchema>;
export type RunbookSettings = z.output<typeof RunbookSettingsSchema>;

/** Settings from the loaded config; the token is read from the variable `token_env` names. */
export function runbookSettingsFromConfig(
  system: Pick<SystemConfig, "github" | "runbooks">,
  env: Readonly<Record<string, string | undefined>>,
): RunbookSettingsInput {
  const token = env[system.github.token_env]?.trim();
  return {
    allowedDomains: system.runbooks.allowed_domains,
    allowPrivateAddresses: system.runbooks.allow_private_addresses,
    cacheTtlMs: system.runbooks.cache_ttl_ms,
    repoUrl: system.runbooks.repo_url,
    githubApiUrl: system.github.api_url,
    ...(token ? { token } : {}),
  };
}
