import type { HealthResponse } from "@tarsy/contracts";
import type { IngestResources } from "./deps.ts";

type Warning = HealthResponse["warnings"][number];

/**
 * Warnings that follow from the configuration itself (shown with the gateway's in the
 * dashboard's banner and in /health). Fixed at start, so their time is the process start.
 */
const startedAt = new Date().toISOString();

export function configWarnings(deps: Pick<IngestResources, "config" | "runbooks">): Warning[] {
  const warnings: Warning[] = [];
  if (deps.runbooks.repoConfigured && !deps.runbooks.tokenConfigured) {
    const tokenEnv = deps.config.system.github.token_env;
    warnings.push({
      id: "runbook:github_token",
      category: "runbook",
      message: "GitHub token not configured",
      details: `system.runbooks.repo_url is set but ${tokenEnv} is empty: listing and fetching use GitHub without authentication (public repositories only, low rate limit); failed runbook fetches fall back to the default runbook. Set ${tokenEnv} (or system.github.token_env).`,
      created_at: startedAt,
    });
  }
  return warnings;
}
