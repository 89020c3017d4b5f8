import type { McpConnection } from "./client/connection.ts";
import type { ServerSessions } from "./client/server-sessions.ts";
import { classifyError, retryBackoffMs } from "./recovery.ts";

export interface RecoveryHooks {
  sleep?: (ms: number) => Promise<void>;
  onRetry?: (info: { serverId: string; action: string; error: unknown; backoffMs: number }) => void;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs an operation on a server's session; on a failure worth retrying, waits a jittered
 * 250–750 ms and tries once more — on a re-created session when the transport failed.
 */
export async function callWithRecovery<T>(
  sessions: ServerSessions,
  serverId: string,
  operation: (connection: McpConnection) => Promise<T>,
  hooks: RecoveryHooks = {},
): Promise<T> {
  let connection: McpConnection | undefined;
  try {
    connection = await sessions.get(serverId);
    return await operation(connection);
  } catch (err) {
    const action = classifyError(err);
    if (action === "no_retry") throw err;
    const backoffMs = retryBackoffMs();
    hooks.onRetry?.({ serverId, action, error: err, backoffMs });
    await (hooks.sleep ?? defaultSleep)(backoffMs);
    const next =
      action === "retry_new_session" || !connection
        ? await sessions.recreate(serverId, connection)
        : connection;
    return operation(next);
  }
}
