import { fillSessionId, type McpServerConfig } from "@tarsy/config";
import type { Logger } from "@tarsy/runtime";
import { createHttpClient } from "./http-fetch.ts";

/** How long one cleanup DELETE may take (the Go TARSy's bound). */
export const SESSION_CLEANUP_TIMEOUT_MS = 15_000;
const FINE = new Set([200, 204, 404]);

/**
 * Best-effort DELETE of the per-execution state that servers with a `session_cleanup_url`
 * keep (a sandbox per execution, say), once the execution's sessions are closed. Every
 * outcome other than 200, 204 or 404 is a warning; nothing is thrown (the server's own idle
 * expiry remains the safety net).
 */
export async function cleanupExecutionSessions(
  servers: ReadonlyMap<string, McpServerConfig>,
  serverIds: readonly string[],
  executionId: string,
  logger: Logger,
): Promise<void> {
  const targets = [...new Set(serverIds)]
    .map((id) => servers.get(id))
    .filter((s): s is McpServerConfig => s !== undefined)
    .filter((s) => s.transport.type !== "stdio" && Boolean(s.transport.session_cleanup_url));
  await Promise.all(targets.map((server) => cleanupOne(server, executionId, logger)));
}

async function cleanupOne(server: McpServerConfig, executionId: string, logger: Logger) {
  const t = server.transport;
  if (t.type === "stdio" || !t.session_cleanup_url) return;
  const url = fillSessionId(t.session_cleanup_url, executionId);
  const log = logger.child({ server: server.id, execution_id: executionId });
  const http = createHttpClient({
    bearerToken: t.bearer_token,
    verifySsl: t.verify_ssl,
    timeoutMs: SESSION_CLEANUP_TIMEOUT_MS,
    customHeaders: resolveCustomHeaders(t.custom_headers, executionId),
  });
  try {
    const response = await http.fetch(url, {
      method: "DELETE",
      signal: AbortSignal.timeout(SESSION_CLEANUP_TIMEOUT_MS),
    });
    await response.body?.cancel().catch(() => {});
    if (FINE.has(response.status)) log.debug({ status: response.status }, "session cleaned up");
    else log.warn({ status: response.status }, "MCP session cleanup answered an unexpected status");
  } catch (err) {
    log.warn({ err }, "MCP session cleanup failed");
  } finally {
    await http.close().catch(() => {});
  }
}

/**
 * An execution's custom headers: `{{.SESSION_ID}}` becomes its id (empty without one, as for
 * the health monitor), and a header whose value ends up empty is not sent.
 */
export function resolveCustomHeaders(
  headers: Readonly<Record<string, string>>,
  executionId: string | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const filled = fillSessionId(value, executionId);
    if (filled !== "") out[name] = filled;
  }
  return out;
}
