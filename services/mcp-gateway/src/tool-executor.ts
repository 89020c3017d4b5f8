import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { classifyTool, dryRunOf, type McpServerConfig } from "@tarsy/config";
import type { McpToolDefinition } from "@tarsy/contracts";
import type { MaskingService } from "@tarsy/masking";
import { parseActionInput } from "@tarsy/mcp-client";
import { secondsSince } from "@tarsy/metrics";
import type { Logger } from "@tarsy/runtime";
import { type ActionLedger, claimRefusal } from "./action-ledger.ts";
import type { CallAuth } from "./auth/credentials.ts";
import {
  type CallFailure,
  failureOf,
  type McpMetrics,
  recordCall,
  UNKNOWN_LABEL,
} from "./call-metrics.ts";
import { callWithRecovery, type RecoveryHooks } from "./call-with-recovery.ts";
import type { OpenExecution } from "./client/execution-registry.ts";
import { extractTextContent } from "./content.ts";
import { describe } from "./errors.ts";
import { maskToolContent } from "./masking.ts";
import { routeToolCall, toolAllowed } from "./router.ts";
import type { McpTimeouts } from "./timeouts.ts";

export interface ToolExecutorDeps {
  servers: ReadonlyMap<string, McpServerConfig>;
  masking: MaskingService;
  timeouts: McpTimeouts;
  logger: Logger;
  metrics: McpMetrics;
  /** A server's tool names as the health monitor last listed them (labels only known tools). */
  toolNames?: (server: string) => readonly string[] | undefined;
  recovery?: RecoveryHooks;
  /** The credential of each call (`mcp_servers.<id>.auth`). */
  auth: CallAuth;
  /** Action requests (Postgres): without it every mutating call is refused. */
  actions?: ActionLedger;
}

export interface ListToolsResult {
  tools: McpToolDefinition[];
  failedServers: Record<string, string>;
}

export interface ToolCallOutcome {
  name: string;
  server?: string;
  tool?: string;
  arguments?: Record<string, unknown>;
  /** Masked text for the LLM. */
  content: string;
  isError: boolean;
  /** The gateway's own answer (a refusal, a routing error), or what the server returned. */
  source: "server" | "gateway";
  redactions: number;
  durationMs: number;
}

/** Failures answered by the gateway itself: the call never reached a server. */
const GATEWAY_ANSWERS: ReadonlySet<CallFailure> = new Set([
  "not_routed",
  "server_not_configured",
  "unknown_tool",
  "not_permitted",
]);

/**
 * A server's tool as agents and the API see it, with its class: the server's annotations under
 * the config's overrides (`classifyTool`); a server the gateway has no config for classes by
 * annotations alone.
 */
export function toToolDefinition(
  server: string,
  tool: Tool,
  config: Pick<McpServerConfig, "tools"> | undefined,
): McpToolDefinition {
  const toolClass = classifyTool(config ?? {}, tool.name, tool.annotations);
  return {
    name: `${server}.${tool.name}`,
    server,
    tool: tool.name,
    description: tool.description ?? "",
    input_schema: (tool.inputSchema ?? { type: "object" }) as Record<string, unknown>,
    mutating: toolClass.mutating,
    mutating_source: toolClass.source,
    dry_run: toolClass.mutating && dryRunOf(config ?? {}, tool.name) !== undefined,
  };
}

/** What the agent is told when it calls a mutating tool it was not given. */
function mutatingRefusal(server: string, tool: string): string {
  return `tool "${tool}" of server "${server}" may change the system (mutating), and this agent is not allowed to run mutating tools: only action agents may. The call was not made.`;
}

/** Lists and calls tools for one execution: routing, argument parsing, recovery and masking. */
export class ToolExecutor {
  constructor(private readonly deps: ToolExecutorDeps) {}

  /** Tools of the execution's servers (filtered); a failing server is reported, not fatal. */
  async listTools(execution: OpenExecution): Promise<ListToolsResult> {
    const { scope, sessions } = execution;
    const done = execution.begin();
    const failedServers: Record<string, string> = {};
    const perServer = await Promise.all(
      scope.servers.map(async (server) => {
        if (!this.deps.servers.has(server)) {
          failedServers[server] = `MCP server "${server}" is not configured`;
          return [];
        }
        try {
          const tools = await this.withAuth(execution, server, () =>
            callWithRecovery(
              sessions,
              server,
              () => sessions.listTools(server, this.deps.timeouts.listMs),
              this.deps.recovery,
            ),
          );
          return tools
            .filter((t) => toolAllowed(scope, server, t.name))
            .map((t) => this.definition(server, t))
            .filter((t) => scope.allowMutating || !t.mutating);
        } catch (err) {
          const config = this.deps.servers.get(server);
          const reason = maskToolContent(this.deps.masking, config, describe(err), "tools/list");
          failedServers[server] = reason.content;
          this.deps.logger.warn(
            {
              execution_id: scope.executionId,
              session_id: scope.sessionId,
              server,
              err: reason.content,
            },
            "listing MCP tools failed",
          );
          return [];
        }
      }),
    ).finally(done);
    return { tools: perServer.flat(), failedServers };
  }

  /** Executes one call. Every tool-level problem comes back as content with isError. */
  async callTool(
    execution: OpenExecution,
    name: string,
    rawArguments: string,
    approvalId?: string,
    /** Run the call's dry-run form instead (see `dryRunOf`), never the call. */
    dryRun = false,
  ): Promise<ToolCallOutcome> {
    const started = performance.now();
    const executed = await this.execute(execution, name, rawArguments, started, approvalId, dryRun);
    const { failure } = executed;
    const outcome: ToolCallOutcome = {
      ...executed.outcome,
      source: failure !== null && GATEWAY_ANSWERS.has(failure) ? "gateway" : "server",
    };
    // Only names the gateway knows become labels: what the LLM invents stays out.
    const server = outcome.server && this.deps.servers.has(outcome.server) ? outcome.server : null;
    const known = (name: string | undefined) =>
      server !== null &&
      name !== undefined &&
      (execution.sessions.cachedTools(server)?.some((t) => t.name === name) ||
        this.deps.toolNames?.(server)?.includes(name));
    const tool = known(outcome.tool) ? outcome.tool : undefined;
    recordCall(
      this.deps.metrics,
      { server: server ?? UNKNOWN_LABEL, tool: tool ?? UNKNOWN_LABEL },
      secondsSince(started),
      failure,
    );
    return outcome;
  }

  /** One tool of a server with its class (the server's config overrides its annotations). */
  definition(server: string, tool: Tool): McpToolDefinition {
    return toToolDefinition(server, tool, this.deps.servers.get(server));
  }

  /** Runs an operation with the credential the server's auth mode asks for. */
  private withAuth<T>(
    execution: OpenExecution,
    server: string,
    operation: () => Promise<T>,
  ): Promise<T> {
    const config = this.deps.servers.get(server);
    if (!config) return operation();
    return this.deps.auth.run(execution.scope, config, operation);
  }

  private async execute(
    execution: OpenExecution,
    name: string,
    rawArguments: string,
    started: number,
    approvalId: string | undefined,
    dryRun: boolean,
  ): Promise<{ outcome: Omit<ToolCallOutcome, "source">; failure: CallFailure | null }> {
    const { scope, sessions } = execution;
    const elapsed = () => Math.round(performance.now() - started);
    const log = this.deps.logger.child({
      execution_id: scope.executionId,
      ...(scope.sessionId ? { session_id: scope.sessionId } : {}),
    });
    const route = routeToolCall(name, { servers: scope.servers, toolFilters: scope.toolFilters });
    if (!route.ok) {
      return {
        outcome: {
          name,
          content: route.message,
          isError: true,
          redactions: 0,
          durationMs: elapsed(),
        },
        failure: "not_routed",
      };
    }
    const { server, tool } = route.ref;
    const config = this.deps.servers.get(server);
    if (!config) {
      return {
        outcome: {
          name,
          server,
          tool,
          content: `MCP server "${server}" is not configured on the gateway`,
          isError: true,
          redactions: 0,
          durationMs: elapsed(),
        },
        failure: "server_not_configured",
      };
    }
    const args = parseActionInput(rawArguments);
    const base = { name, server, tool, arguments: args };
    const done = execution.begin();
    try {
      // Only a tool the server lists, and that this execution may use, is called: its class
      // comes from that list, so the list is read first when this session has none yet.
      const known =
        sessions.cachedTools(server) ??
        (await this.withAuth(execution, server, () =>
          callWithRecovery(
            sessions,
            server,
            () => sessions.listTools(server, this.deps.timeouts.listMs),
            this.deps.recovery,
          ),
        ));
      const listed = known.find((t) => t.name === tool);
      if (!listed) {
        const offered = known
          .filter((t) => toolAllowed(scope, server, t.name))
          .map((t) => this.definition(server, t))
          .filter((t) => scope.allowMutating || !t.mutating)
          .map((t) => t.tool);
        return {
          outcome: {
            ...base,
            content: `tool "${tool}" not found on server "${server}". Available tools: ${offered.join(", ")}`,
            isError: true,
            redactions: 0,
            durationMs: elapsed(),
          },
          failure: "unknown_tool",
        };
      }
      if (!scope.allowMutating && this.definition(server, listed).mutating) {
        log.warn({ server, tool }, "call to a mutating tool refused: the agent may not mutate");
        return {
          outcome: {
            ...base,
            content: mutatingRefusal(server, tool),
            isError: true,
            redactions: 0,
            durationMs: elapsed(),
          },
          failure: "not_permitted",
        };
      }
      if (dryRun) {
        return await this.executeDryRun(execution, {
          base,
          server,
          tool,
          args,
          known,
          mutating: this.definition(server, listed).mutating,
          config,
          elapsed,
        });
      }
      if (this.definition(server, listed).mutating) {
        return await this.executeApproved(execution, {
          base,
          server,
          tool,
          args,
          rawArguments,
          approvalId,
          config,
          elapsed,
        });
      }
      const result = await this.withAuth(execution, server, () =>
        callWithRecovery(
          sessions,
          server,
          (connection) => connection.callTool(tool, args, this.deps.timeouts.callMs),
          {
            ...this.deps.recovery,
            onRetry: (info) => {
              log.warn(
                { server, tool, action: info.action, err: describe(info.error) },
                "retrying MCP call",
              );
              this.deps.recovery?.onRetry?.(info);
            },
          },
        ),
      );
      const masked = maskToolContent(this.deps.masking, config, extractTextContent(result), tool);
      const isError = result.isError === true;
      return {
        outcome: {
          ...base,
          content: masked.content,
          isError,
          redactions: masked.redactions,
          durationMs: elapsed(),
        },
        failure: isError ? "tool_error" : null,
      };
    } catch (err) {
      // Error text may echo server output: mask it like a result, before it is logged too.
      const masked = maskToolContent(
        this.deps.masking,
        config,
        `MCP tool execution failed: ${describe(err)}`,
        tool,
      );
      log.warn({ server, tool, err: masked.content }, "MCP tool call failed");
      return {
        outcome: {
          ...base,
          content: masked.content,
          isError: true,
          redactions: masked.redactions,
          durationMs: elapsed(),
        },
        failure: failureOf(err),
      };
    } finally {
      done();
    }
  }

  /**
   * A mutating call's dry-run form (`dryRunOf`), shown on its approval request: only the
   * configured form runs, without approval; never the call itself.
   */
  private async executeDryRun(
    execution: OpenExecution,
    call: {
      base: Pick<ToolCallOutcome, "name" | "server" | "tool" | "arguments">;
      server: string;
      tool: string;
      args: Record<string, unknown>;
      known: readonly Tool[];
      mutating: boolean;
      config: McpServerConfig;
      elapsed: () => number;
    },
  ): Promise<{ outcome: Omit<ToolCallOutcome, "source">; failure: CallFailure | null }> {
    const { base, server, tool, args, config, elapsed } = call;
    const form = call.mutating ? dryRunOf(config, tool) : undefined;
    if (!form || !call.known.some((t) => t.name === form.tool)) {
      return {
        outcome: {
          ...base,
          content: form
            ? `the dry-run tool "${form.tool}" is not on server "${server}"`
            : `tool "${tool}" of server "${server}" has no dry-run form`,
          isError: true,
          redactions: 0,
          durationMs: elapsed(),
        },
        failure: "not_permitted",
      };
    }
    const dryArgs = { ...args, ...form.arguments };
    const result = await this.withAuth(execution, server, () =>
      callWithRecovery(
        execution.sessions,
        server,
        (connection) => connection.callTool(form.tool, dryArgs, this.deps.timeouts.callMs),
        this.deps.recovery,
      ),
    );
    const masked = maskToolContent(
      this.deps.masking,
      config,
      extractTextContent(result),
      form.tool,
    );
    const isError = result.isError === true;
    return {
      outcome: {
        name: base.name,
        server,
        tool: form.tool,
        arguments: dryArgs,
        content: masked.content,
        isError,
        redactions: masked.redactions,
        durationMs: elapsed(),
      },
      failure: isError ? "tool_error" : null,
    };
  }

  /**
   * A mutating call: sent only after its approved action request is claimed (once: a claimed
   * request is never sent again), and sent once — no retry after it may have reached the
   * server. Its end (result or failure) is recorded on the request before the reply.
   */
  private async executeApproved(
    execution: OpenExecution,
    call: {
      base: Pick<ToolCallOutcome, "name" | "server" | "tool" | "arguments">;
      server: string;
      tool: string;
      args: Record<string, unknown>;
      rawArguments: string;
      approvalId: string | undefined;
      config: McpServerConfig;
      elapsed: () => number;
    },
  ): Promise<{ outcome: Omit<ToolCallOutcome, "source">; failure: CallFailure | null }> {
    const { base, server, tool, args, approvalId, config, elapsed } = call;
    const refuse = (content: string) => ({
      outcome: { ...base, content, isError: true, redactions: 0, durationMs: elapsed() },
      failure: "not_permitted" as const,
    });
    const ledger = this.deps.actions;
    if (!ledger) return refuse(claimRefusal(server, tool, "no_ledger"));
    if (approvalId === undefined) return refuse(claimRefusal(server, tool, "missing"));
    // The session first (safe to retry: nothing was sent yet), then the claim, then one send.
    const connection = await this.withAuth(execution, server, () =>
      callWithRecovery(execution.sessions, server, async (c) => c, this.deps.recovery),
    );
    const claim = await ledger.claim({
      id: approvalId,
      executionId: execution.scope.executionId,
      server,
      tool,
      rawArguments: call.rawArguments,
    });
    if (!claim.ok) {
      this.deps.logger.warn(
        { execution_id: execution.scope.executionId, server, tool, reason: claim.reason },
        "mutating call refused: its action request does not allow it",
      );
      return refuse(claimRefusal(server, tool, claim.reason));
    }
    let content: string;
    let isError: boolean;
    let redactions = 0;
    let status: "succeeded" | "failed" | "unknown";
    try {
      const result = await this.withAuth(execution, server, () =>
        connection.callTool(tool, args, this.deps.timeouts.callMs),
      );
      const masked = maskToolContent(this.deps.masking, config, extractTextContent(result), tool);
      content = masked.content;
      redactions = masked.redactions;
      isError = result.isError === true;
      status = isError ? "failed" : "succeeded";
    } catch (err) {
      // Sent, and no answer (a timeout, a lost transport): whether it acted is unknown.
      const masked = maskToolContent(
        this.deps.masking,
        config,
        `The outcome of this call is unknown: it was sent and no answer came back (${describe(err)}). It was NOT repeated; check the system's state before relying on it.`,
        tool,
      );
      content = masked.content;
      redactions = masked.redactions;
      isError = true;
      status = "unknown";
    }
    await ledger.finish(approvalId, status, content);
    return {
      outcome: { ...base, content, isError, redactions, durationMs: elapsed() },
      failure: isError ? "tool_error" : null,
    };
  }
}
