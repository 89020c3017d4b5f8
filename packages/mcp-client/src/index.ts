export {
  type CallToolInput,
  createMcpGatewayClient,
  type McpGatewayClient,
  type McpGatewayClientOptions,
} from "./client.ts";
