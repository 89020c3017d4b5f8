import { type Bus, RpcNoRespondersError, type RpcRemoteError, requestRpc } from "@tarsy/bus";
import { MCP_GATEWAY, type RpcMethodDef } from "@tarsy/contracts";
import type { Logger } from "@tarsy/runtime";
import type { z } from "zod";
import { ExecutionAbortedError, ToolGatewayError } from "./errors.ts";
import type { ToolCallResult, ToolDefinition, ToolGateway, ToolScope } from "./ports.ts";

export interface GatewayTimeouts {
  listMs: number;
  callMs: number;
  releaseMs: number;
}

/** Above the gateway's own limits (30 s init, 90 s per call) so its answer arrives first. */
export const DEFAULT_GATEWAY_TIMEOUTS: GatewayTimeouts = {
  listMs: 60_000,
  callMs: 100_000,
  releaseMs: 10_000,
};

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted)
    return Promise.reject(signal.reason ?? new ExecutionAbortedError("cancelled"));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason ?? new ExecutionAbortedError("cancelled"));
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

/**
 * The mcp-gateway over NATS request/reply. An execution's MCP sessions live on one gateway
 * replica: the first request goes through the shared queue group, later ones to the replica
 * that answered. When that replica is gone, the next request opens the execution again on
 * another one (every request carries the execution's scope).
 */
export function createGatewayClient(
  bus: Bus,
  logger: Logger,
  timeouts: GatewayTimeouts = DEFAULT_GATEWAY_TIMEOUTS,
): ToolGateway {
  const affinity = new Map<string, string>();

  async function request<D extends RpcMethodDef>(
    executionId: string,
    def: D,
    payload: z.input<D["request"]>,
    timeoutMs: number,
  ): Promise<z.output<D["reply"]>> {
    const pinned = affinity.get(executionId);
    try {
      const reply = (await requestRpc(bus, def, pinned ?? MCP_GATEWAY.subjectPrefix, payload, {
        timeoutMs,
      })) as z.output<D["reply"]> & { replica?: { subject_prefix: string } };
      if (reply.replica) affinity.set(executionId, reply.replica.subject_prefix);
      return reply;
    } catch (err) {
      if (pinned && err instanceof RpcNoRespondersError) {
        logger.warn({ execution_id: executionId }, "gateway replica gone; reopening the execution");
        affinity.delete(executionId);
        return request(executionId, def, payload, timeoutMs);
      }
      throw err;
    }
  }

  const scopeOf = (scope: ToolScope) => ({
    v: 1 as const,
    execution_id: scope.executionId,
    session_id: scope.sessionId,
    servers: scope.servers,
    tool_filters: scope.toolFilters,
  });

  return {
    async listTools(scope, signal) {
      try {
        const reply = await abortable(
          request(
            scope.executionId,
            MCP_GATEWAY.methods.listTools,
            scopeOf(scope),
            timeouts.listMs,
          ),
          signal,
        );
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
        throw new ToolGatewayError(`listing tools failed: ${(err as Error).message}`, {
          cause: err,
        });
      }
    },

    async callTool(scope, call, signal): Promise<ToolCallResult> {
      try {
        const reply = await abortable(
          request(
            scope.executionId,
            MCP_GATEWAY.methods.callTool,
            { ...scopeOf(scope), call_id: call.callId, name: call.name, arguments: call.arguments },
            timeouts.callMs,
          ),
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
        const remote = err as Partial<RpcRemoteError>;
        throw new ToolGatewayError(
          `tool call ${call.name} failed: ${remote.message ?? String(err)}`,
          { cause: err },
        );
      }
    },

    async release(executionId) {
      const pinned = affinity.get(executionId);
      affinity.delete(executionId);
      if (!pinned) return;
      try {
        await requestRpc(
          bus,
          MCP_GATEWAY.methods.release,
          pinned,
          { v: 1, execution_id: executionId },
          { timeoutMs: timeouts.releaseMs },
        );
      } catch (err) {
        logger.warn({ err, execution_id: executionId }, "releasing MCP sessions failed");
      }
    },
  };
}
