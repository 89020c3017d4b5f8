import { type Bus, RpcNoRespondersError, requestRpc } from "@tarsy/bus";
import {
  MCP_GATEWAY,
  type McpCallToolReply,
  type McpExecutionScope,
  type McpHealthReply,
  type McpListToolsReply,
  type McpReleaseReply,
  type McpServerToolsReply,
  type McpWarningsReply,
} from "@tarsy/contracts";

export interface McpGatewayClientOptions {
  /** Deadline of a tool call request; above the gateway's call timeout (90 s) plus one retry. */
  callTimeoutMs?: number;
  /** Deadline of tool listing (covers server initialization). */
  listTimeoutMs?: number;
  /** Deadline of health, warnings, release. */
  shortTimeoutMs?: number;
}

export interface CallToolInput {
  /** `server.tool` or `server__tool`. */
  name: string;
  /** Raw ActionInput text or function-call JSON arguments. */
  arguments?: string;
  callId?: string;
  /** A mutating call's approved action request (its idempotency key). */
  approvalId?: string;
  /** Run the call's configured dry-run form instead of the call. */
  dryRun?: boolean;
}

/** The typed client of the mcp-gateway API, with execution affinity. */
export interface McpGatewayClient {
  /** Tools for the execution's servers and filters (opens the execution on a replica). */
  listTools(scope: McpExecutionScope): Promise<McpListToolsReply>;
  /** One tool call; tool-level problems come back as `is_error` content, never as a throw. */
  callTool(scope: McpExecutionScope, call: CallToolInput): Promise<McpCallToolReply>;
  /** Closes the execution's MCP sessions on its replica (a no-op when none is known). */
  release(executionId: string): Promise<McpReleaseReply | undefined>;
  /** The replica now holding an execution, if any. */
  replicaOf(executionId: string): string | undefined;
  health(replicaId?: string): Promise<McpHealthReply>;
  warnings(replicaId?: string): Promise<McpWarningsReply>;
  serverTools(replicaId?: string): Promise<McpServerToolsReply>;
}

const replicaPrefix = (id: string) => `${MCP_GATEWAY.subjectPrefix}.replica.${id}`;

class GatewayClient implements McpGatewayClient {
  private readonly affinity = new Map<string, { id: string; subjectPrefix: string }>();
  private readonly callTimeoutMs: number;
  private readonly listTimeoutMs: number;
  private readonly shortTimeoutMs: number;

  constructor(
    private readonly bus: Bus,
    options: McpGatewayClientOptions,
  ) {
    this.callTimeoutMs = options.callTimeoutMs ?? 240_000;
    this.listTimeoutMs = options.listTimeoutMs ?? 75_000;
    this.shortTimeoutMs = options.shortTimeoutMs ?? 10_000;
  }

  /**
   * Sends an execution-scoped request to the replica holding the execution, or through the
   * queue group when none does (or the one that did is gone), and remembers who answered.
   */
  private async scoped<R extends { replica: { id: string; subject_prefix: string } }>(
    executionId: string,
    send: (subjectPrefix: string) => Promise<R>,
  ): Promise<R> {
    const held = this.affinity.get(executionId);
    let reply: R;
    if (held) {
      try {
        reply = await send(held.subjectPrefix);
      } catch (err) {
        if (!(err instanceof RpcNoRespondersError)) throw err;
        // The replica is gone: open the execution again on another one.
        this.affinity.delete(executionId);
        reply = await send(MCP_GATEWAY.subjectPrefix);
      }
    } else {
      reply = await send(MCP_GATEWAY.subjectPrefix);
    }
    this.affinity.set(executionId, {
      id: reply.replica.id,
      subjectPrefix: reply.replica.subject_prefix,
    });
    return reply;
  }

  listTools(scope: McpExecutionScope): Promise<McpListToolsReply> {
    return this.scoped(scope.execution_id, (prefix) =>
      requestRpc(
        this.bus,
        MCP_GATEWAY.methods.listTools,
        prefix,
        { v: 1, ...scope },
        {
          timeoutMs: this.listTimeoutMs,
        },
      ),
    );
  }

  callTool(scope: McpExecutionScope, call: CallToolInput): Promise<McpCallToolReply> {
    return this.scoped(scope.execution_id, (prefix) =>
      requestRpc(
        this.bus,
        MCP_GATEWAY.methods.callTool,
        prefix,
        {
          v: 1,
          ...scope,
          name: call.name,
          arguments: call.arguments ?? "",
          ...(call.callId !== undefined ? { call_id: call.callId } : {}),
          ...(call.approvalId !== undefined ? { approval_id: call.approvalId } : {}),
          ...(call.dryRun ? { dry_run: true } : {}),
        },
        { timeoutMs: this.callTimeoutMs },
      ),
    );
  }

  async release(executionId: string): Promise<McpReleaseReply | undefined> {
    const held = this.affinity.get(executionId);
    if (!held) return undefined;
    this.affinity.delete(executionId);
    try {
      return await requestRpc(
        this.bus,
        MCP_GATEWAY.methods.release,
        held.subjectPrefix,
        { v: 1, execution_id: executionId },
        { timeoutMs: this.shortTimeoutMs },
      );
    } catch (err) {
      // A replica that is gone took the sessions with it.
      if (err instanceof RpcNoRespondersError) return undefined;
      throw err;
    }
  }

  replicaOf(executionId: string): string | undefined {
    return this.affinity.get(executionId)?.id;
  }

  private prefixFor(replicaId?: string): string {
    return replicaId ? replicaPrefix(replicaId) : MCP_GATEWAY.subjectPrefix;
  }

  health(replicaId?: string): Promise<McpHealthReply> {
    return requestRpc(
      this.bus,
      MCP_GATEWAY.methods.health,
      this.prefixFor(replicaId),
      { v: 1 },
      {
        timeoutMs: this.shortTimeoutMs,
      },
    );
  }

  warnings(replicaId?: string): Promise<McpWarningsReply> {
    return requestRpc(
      this.bus,
      MCP_GATEWAY.methods.warnings,
      this.prefixFor(replicaId),
      { v: 1 },
      {
        timeoutMs: this.shortTimeoutMs,
      },
    );
  }

  serverTools(replicaId?: string): Promise<McpServerToolsReply> {
    return requestRpc(
      this.bus,
      MCP_GATEWAY.methods.serverTools,
      this.prefixFor(replicaId),
      { v: 1 },
      { timeoutMs: this.shortTimeoutMs },
    );
  }
}

export function createMcpGatewayClient(
  bus: Bus,
  options: McpGatewayClientOptions = {},
): McpGatewayClient {
  return new GatewayClient(bus, options);
}
