import { type Bus, type RpcRoute, type RpcService, rpcRoute, serveRpc } from "@tarsy/bus";
import { MCP_GATEWAY, type McpReplicaRef } from "@tarsy/contracts";
import type { GatewayHandlers } from "./handlers.ts";

/**
 * Serves the gateway API twice: on the shared subjects (queue group, any replica) and on this
 * replica's own subjects, where an execution's later requests come for affinity.
 */
export async function startGatewayService(
  bus: Bus,
  replica: McpReplicaRef,
  handlers: GatewayHandlers,
): Promise<RpcService> {
  const m = MCP_GATEWAY.methods;
  const routesAt = (subjectPrefix: string, queue: string): RpcRoute[] => [
    rpcRoute({ def: m.listTools, subjectPrefix, queue, handler: (req) => handlers.listTools(req) }),
    rpcRoute({
      def: m.callTool,
      subjectPrefix,
      queue,
      handler: (req, ctx) => handlers.callTool(req, ctx.maxPayload),
    }),
    rpcRoute({ def: m.release, subjectPrefix, queue, handler: (req) => handlers.release(req) }),
    rpcRoute({ def: m.health, subjectPrefix, queue, handler: () => handlers.health() }),
    rpcRoute({ def: m.warnings, subjectPrefix, queue, handler: () => handlers.warnings() }),
    rpcRoute({ def: m.serverTools, subjectPrefix, queue, handler: () => handlers.serverTools() }),
  ];
  return serveRpc(
    bus,
    {
      name: MCP_GATEWAY.service.name,
      version: MCP_GATEWAY.service.version,
      description: "TARSy MCP gateway: tool listing and calls per execution, masking, MCP health",
      metadata: { replica_id: replica.id, replica_subject_prefix: replica.subject_prefix },
    },
    [
      ...routesAt(MCP_GATEWAY.subjectPrefix, MCP_GATEWAY.queue),
      ...routesAt(replica.subject_prefix, replica.id),
    ],
  );
}
