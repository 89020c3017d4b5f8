import { McpCallToolRequestSchema } from "@tarsy/contracts";
import { parseActionInput } from "@tarsy/mcp-client";
import type { ToolCallResult, ToolDefinition, ToolGateway, ToolScope } from "../src/ports.ts";

/**
 * An in-process stand-in for the runner's `ToolGateway` port, which in production is
 * `createGatewayTools` over `@tarsy/mcp-client` (NATS request/reply) and mcp-gateway behind it.
 * It lets tests of the runner's own logic script tools without any MCP server.
 *
 * What it shares with the real path: each call is checked against the gateway's request
 * schema (`McpCallToolRequestSchema` from contracts, built as mcp-client builds it), the
 * arguments are parsed by the gateway's own cascade (`parseActionInput`), tools are named
 * `server.tool`, and a failure comes back as `isError` content.
 *
 * What it does not cover: NATS, replica affinity, MCP transports and sessions, masking, tool
 * filters, `server__tool` names, timeouts and retries. A cancel here only rejects the local
 * wait (`delayMs`); that cancelling a call really aborts it at the MCP server is shown against
 * the real gateway in gateway.test.ts.
 */
export class StandInGateway implements ToolGateway {
  readonly calls: { scope: ToolScope; name: string; arguments: string }[] = [];
  released: string[] = [];
  /** Delay of every call, to make room for a cancel. */
  delayMs = 0;

  constructor(
    private readonly results: Record<string, (args: Record<string, unknown>) => string>,
  ) {}

  async listTools(scope: ToolScope) {
    const tools: ToolDefinition[] = scope.servers.flatMap((server) =>
      Object.keys(this.results).map((tool) => ({
        name: `${server}.${tool}`,
        server,
        tool,
        description: `the ${tool} tool`,
        inputSchema: { type: "object", properties: {} },
      })),
    );
    return { tools, failedServers: {} };
  }

  async callTool(
    scope: ToolScope,
    call: { callId: string; name: string; arguments: string },
    signal: AbortSignal,
  ): Promise<ToolCallResult> {
    this.calls.push({ scope, name: call.name, arguments: call.arguments });
    const request = McpCallToolRequestSchema.parse({
      v: 1,
      execution_id: scope.executionId,
      session_id: scope.sessionId,
      servers: scope.servers,
      tool_filters: scope.toolFilters,
      allow_mutating: scope.allowMutating,
      name: call.name,
      arguments: call.arguments,
      call_id: call.callId,
    });
    if (this.delayMs > 0) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, this.delayMs);
        signal.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(signal.reason);
        });
      });
    }
    const [server, tool] = request.name.split(".");
    const run = tool ? this.results[tool] : undefined;
    const args = parseActionInput(request.arguments);
    return {
      server,
      tool,
      arguments: args,
      content: run ? run(args) : `unknown tool ${call.name}`,
      isError: !run,
      durationMs: 1,
    };
  }

  async release(executionId: string) {
    this.released.push(executionId);
  }
}
