import { RpcRemoteError } from "@tarsy/bus";
import type { McpExecutionScope } from "@tarsy/contracts";
import type { McpGatewayClient } from "@tarsy/mcp-client";
import { abortable, type Logger } from "@tarsy/runtime";
import { ExecutionAbortedError, ToolGatewayError } from "./errors.ts";
import type { ToolCallResult, ToolDefinition, ToolGateway, ToolScope } from "./ports.ts";

/** The execution's abort reason (its signal always carries one; a bare abort is a cancel). */
function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new ExecutionAbortedError("cancelled");
}

function scopeOf(scope: ToolScope): McpExecutionScope {
  return {
    execution_id: scope.executionId,
    session_id: scope.sessionId,
    servers: scope.servers,
    tool_filters: scope.toolFilters,
    allow_mutating: scope.allowMutating,
  };
}

const describe = (err: unknown) =>
  err instanceof RpcRemoteError || err instanceof Error ? err.message : String(err);

/**
 * The runner's tools through mcp-gateway (NATS request/reply with replica affinity, from
 * `@tarsy/mcp-client`). Results arrive masked; tool errors are `is_error` content.
 */
export function createGatewayTools(client: McpGatewayClient, logger: Logger): ToolGateway {
  return {
    async listTools(scope, signal) {
      try {
        const reply = await abortable(client.listTools(scopeOf(scope)), signal, () =>
          abortReason(signal),
        );
        const tools: ToolDefinition[] = reply.tools.map((t) => ({
          name: t.name,
          server: t.server,
          tool: t.tool,
          description: t.description,
          inputSchema: t.input_schema,
          mutating: t.mutating,
          dryRun: t.dry_run,
        }));
        return { tools, failedServers: reply.failed_servers };
      } catch (err) {
        if (err instanceof ExecutionAbortedError) throw err;
        throw new ToolGatewayError(`listing tools failed: ${describe(err)}`, { cause: err });
      }
    },

    async callTool(scope, call, signal): Promise<ToolCallResult> {
      try {
        const reply = await abortable(
          client.callTool(scopeOf(scope), {
            name: call.name,
            arguments: call.arguments,
            callId: call.callId,
            ...(call.approvalId !== undefined && { approvalId: call.approvalId }),
            ...(call.dryRun && { dryRun: true }),
          }),
          signal,
          () => abortReason(signal),
        );
        return {
          server: reply.server,
          tool: reply.tool,
          arguments: reply.arguments,
          content: reply.content,
          isError: reply.is_error,
          source: reply.source === "gateway" ? "tarsy" : "server",
          durationMs: reply.duration_ms,
        };
      } catch (err) {
        if (err instanceof ExecutionAbortedError) throw err;
        throw new ToolGatewayError(`tool call ${call.name} failed: ${describe(err)}`, {
          cause: err,
        });
      }
    },

    async release(executionId) {
      try {
        await client.release(executionId);
      } catch (err) {
        logger.warn({ err, execution_id: executionId }, "releasing MCP sessions failed");
      }
    },
  };
}
