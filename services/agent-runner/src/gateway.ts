import { RpcRemoteError } from "@tarsy/bus";
import type { McpExecutionScope } from "@tarsy/contracts";
import type { McpGatewayClient } from "@tarsy/mcp-client";
import type { Logger } from "@tarsy/runtime";
import { ExecutionAbortedError, ToolGatewayError } from "./errors.ts";
import type { ToolCallResult, ToolDefinition, ToolGateway, ToolScope } from "./ports.ts";

/** Rejects with the signal's reason as soon as it fires (the request itself runs on). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  const reason = () => signal.reason ?? new ExecutionAbortedError("cancelled");
  if (signal.aborted) return Promise.reject(reason());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reason());
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}

function scopeOf(scope: ToolScope): McpExecutionScope {
  return {
    execution_id: scope.executionId,
    session_id: scope.sessionId,
    servers: scope.servers,
    tool_filters: scope.toolFilters,
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
        const reply = await abortable(client.listTools(scopeOf(scope)), signal);
        const tools: ToolDefinition[] = reply.tools.map((t) => ({
          name: t.name,
          server: t.server,
          tool: t.tool,
          description: t.description,
          inputSchema: t.input_schema,
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
          }),
          signal,
        );
        return {
          server: reply.server,
          tool: reply.tool,
          arguments: reply.arguments,
          content: reply.content,
          isError: reply.is_error,
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
