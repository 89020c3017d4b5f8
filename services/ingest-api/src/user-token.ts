import type { StoredUserToken } from "@tarsy/db";
import type { Logger } from "@tarsy/runtime";
import type { Context } from "hono";
import { identityOf } from "./access.ts";
import type { IngestResources } from "./deps.ts";

/**
 * The request's own bearer token (the user's, from the trusted proxy), sealed for the row the
 * request creates, with its expiry (`authorization.user_token_ttl`). Null when there is none or
 * no TARSY_TOKEN_KEY is set. The token is never logged, published or shown to an LLM: it
 * exists in clear only here and, at tool-call time, in mcp-gateway.
 */
export function sealedUserTokenOf(deps: IngestResources, c: Context): StoredUserToken | null {
  const token = identityOf(c).userToken;
  if (!token || !deps.tokenSeal) return null;
  const now = deps.clock?.() ?? new Date();
  return {
    sealed: deps.tokenSeal.seal(token),
    expiresAt: new Date(now.getTime() + deps.config.authorization.user_token_ttl_ms),
  };
}

/** A config warning at start-up: per-user MCP servers with no key to keep users' tokens. */
export function warnWithoutTokenKey(deps: IngestResources, logger: Logger): void {
  if (deps.tokenSeal) return;
  const perUser = [...deps.config.mcpServers.values()].filter((s) => s.auth.mode !== "shared");
  if (perUser.length === 0) return;
  logger.warn(
    { servers: perUser.map((s) => s.id), path: "mcp_servers.*.auth.mode" },
    "MCP servers use per-user credentials but TARSY_TOKEN_KEY is not set: users' tokens are not kept, so their tool calls fail closed (or use shared credentials where fallback_to_shared)",
  );
}
