import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The credential of the MCP operation in progress. A per-user server's operations run inside
 * `withCallCredential`, and the HTTP client of every MCP transport reads it for each request it
 * sends, so the header belongs to the call, not to the connection: an execution's sessions
 * carry its user's token and nobody else's. Outside such a scope (the health monitor, servers
 * in `shared` mode, a fallback to shared) the transport's own headers apply.
 */
export interface CallCredential {
  /** The bearer for `Authorization` (the user's token, or one exchanged for it). */
  readonly bearer: string;
}

const storage = new AsyncLocalStorage<CallCredential>();

export function withCallCredential<T>(
  credential: CallCredential,
  fn: () => Promise<T>,
): Promise<T> {
  return storage.run(credential, fn);
}

export function currentCallCredential(): CallCredential | undefined {
  return storage.getStore();
}
