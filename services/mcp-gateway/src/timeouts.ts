/** Deadlines of MCP operations (ms). */
export interface McpTimeouts {
  /** Transport start plus the MCP initialize handshake, per server. */
  initMs: number;
  /** One tools/call. */
  callMs: number;
  /** One tools/list. */
  listMs: number;
  /** The health monitor's tools/list ping. */
  healthPingMs: number;
}

export const DEFAULT_TIMEOUTS: McpTimeouts = {
  initMs: 30_000,
  callMs: 90_000,
  listMs: 10_000,
  healthPingMs: 5_000,
};
