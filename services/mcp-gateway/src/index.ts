export {
  type Gateway,
  type GatewayOptions,
  type GatewayResources,
  startGateway,
} from "./gateway.ts";
export { type InspectedServer, type InspectOptions, inspectServers } from "./inspect.ts";
export { DEFAULT_TIMEOUTS, type McpTimeouts } from "./timeouts.ts";
