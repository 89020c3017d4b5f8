import { RPC_REPLY_HEADROOM_BYTES } from "@tarsy/bus";
import type {
  McpCallToolReply,
  McpCallToolRequestSchema,
  McpHealthReply,
  McpListToolsReply,
  McpListToolsRequestSchema,
  McpReleaseReply,
  McpReleaseRequestSchema,
  McpReplicaRef,
  McpServerToolsReply,
  McpWarningsReply,
} from "@tarsy/contracts";
import type { z } from "zod";
import type { ExecutionRegistry, ExecutionScope } from "../client/execution-registry.ts";
import type { HealthMonitor } from "../health.ts";
import type { ToolExecutor } from "../tool-executor.ts";
import { fitContent } from "../truncate.ts";
import type { SystemWarnings } from "../warnings.ts";

export interface GatewayHandlersDeps {
  replica: McpReplicaRef;
  executions: ExecutionRegistry;
  executor: ToolExecutor;
  health: HealthMonitor;
  warnings: SystemWarnings;
}

type ScopeRequest = z.output<typeof McpListToolsRequestSchema>;

function scopeOf(request: ScopeRequest): ExecutionScope {
  return {
    executionId: request.execution_id,
    sessionId: request.session_id,
    servers: request.servers,
    toolFilters: request.tool_filters,
    allowMutating: request.allow_mutating,
  };
}

/** The API's logic, independent of NATS (the service in ./service.ts routes requests here). */
export function createGatewayHandlers(deps: GatewayHandlersDeps) {
  const { replica, executions, executor, health, warnings } = deps;
  return {
    async listTools(request: ScopeRequest): Promise<McpListToolsReply> {
      const execution = executions.acquire(scopeOf(request));
      const result = await executor.listTools(execution);
      return { v: 1, replica, tools: result.tools, failed_servers: result.failedServers };
    },

    async callTool(
      request: z.output<typeof McpCallToolRequestSchema>,
      maxPayload: number,
    ): Promise<McpCallToolReply> {
      const execution = executions.acquire(scopeOf(request));
      const outcome = await executor.callTool(
        execution,
        request.name,
        request.arguments,
        request.approval_id,
        request.dry_run,
      );
      const reply: McpCallToolReply = {
        v: 1,
        replica,
        ...(request.call_id !== undefined ? { call_id: request.call_id } : {}),
        name: outcome.name,
        ...(outcome.server ? { server: outcome.server } : {}),
        ...(outcome.tool ? { tool: outcome.tool } : {}),
        ...(outcome.arguments ? { arguments: outcome.arguments } : {}),
        content: outcome.content,
        is_error: outcome.isError,
        source: outcome.source,
        truncated: false,
        redactions: outcome.redactions,
        duration_ms: outcome.durationMs,
      };
      const limit = maxPayload - RPC_REPLY_HEADROOM_BYTES;
      const fitted = fitContent(reply.content, limit, (content) =>
        JSON.stringify({ ...reply, content, truncated: true }),
      );
      return { ...reply, content: fitted.content, truncated: fitted.truncated };
    },

    async release(request: z.output<typeof McpReleaseRequestSchema>): Promise<McpReleaseReply> {
      const closed = await executions.release(request.execution_id);
      return { v: 1, replica, released: closed !== undefined, closed_sessions: closed ?? 0 };
    },

    async health(): Promise<McpHealthReply> {
      const readiness = health.readiness();
      return {
        v: 1,
        replica,
        ready: readiness.ready,
        ...(readiness.reason ? { not_ready_reason: readiness.reason } : {}),
        healthy: health.isHealthy(),
        servers: health.statusList(),
        open_executions: executions.size(),
      };
    },

    async warnings(): Promise<McpWarningsReply> {
      return { v: 1, replica, warnings: warnings.list() };
    },

    async serverTools(): Promise<McpServerToolsReply> {
      return {
        v: 1,
        replica,
        servers: [...health.cachedTools().entries()].map(([server, s]) => ({
          server,
          healthy: s.healthy,
          tools: s.tools.map((t) => executor.definition(server, t)),
        })),
      };
    },
  };
}
export type GatewayHandlers = ReturnType<typeof createGatewayHandlers>;
