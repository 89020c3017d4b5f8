import type { ServiceMetrics } from "@tarsy/metrics";
import { GatewayError } from "./errors.ts";

export type McpMetrics = Pick<
  ServiceMetrics<"mcp-gateway">,
  "mcpCalls" | "mcpCallDuration" | "mcpErrors" | "mcpWarmPoolTakes"
>;

/** Label of a server or tool the LLM named but the gateway does not know (bounded labels). */
export const UNKNOWN_LABEL = "unknown";

/** Why a tool call failed, as the `code` label of `tarsy_mcp_errors_total`. */
export type CallFailure =
  | "not_routed"
  | "server_not_configured"
  | "unknown_tool"
  /** A mutating tool called by an execution that may not mutate (never sent to the server). */
  | "not_permitted"
  | "tool_error"
  | "timeout"
  | "init_failed"
  | "session_closed"
  | "transport_config"
  | "user_credentials_missing"
  | "token_exchange_failed"
  | "call_failed";

/** The failure code of an exception from an MCP call. */
export function failureOf(err: unknown): CallFailure {
  if (!(err instanceof GatewayError)) return "call_failed";
  switch (err.code) {
    case "mcp_operation_timeout":
      return "timeout";
    case "mcp_init_failed":
      return "init_failed";
    case "mcp_session_closed":
      return "session_closed";
    case "mcp_transport_config":
      return "transport_config";
    case "mcp_server_not_configured":
      return "server_not_configured";
    case "mcp_user_credentials_missing":
      return "user_credentials_missing";
    case "mcp_token_exchange_failed":
      return "token_exchange_failed";
    default: {
      const unreachable: never = err.code;
      return unreachable;
    }
  }
}

export function recordCall(
  metrics: McpMetrics,
  labels: { server: string; tool: string },
  seconds: number,
  failure: CallFailure | null,
): void {
  metrics.mcpCalls.inc({ ...labels, status: failure ? "error" : "ok" });
  metrics.mcpCallDuration.observe(labels, seconds);
  if (failure) metrics.mcpErrors.inc({ ...labels, code: failure });
}
