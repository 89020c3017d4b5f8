export { coerceValue, parseActionInput } from "./action-input.ts";
export {
  type CallToolInput,
  createMcpGatewayClient,
  type McpGatewayClient,
  type McpGatewayClientOptions,
} from "./client.ts";
