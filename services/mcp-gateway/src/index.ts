export {
  type Gateway,
  type GatewayOptions,
  type GatewayResources,
  startGateway,
} from "./gateway.ts";
export { DEFAULT_TIMEOUTS, type McpTimeouts } from "./timeouts.ts";
