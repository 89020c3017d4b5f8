import type { ToolCallResult, ToolDefinition, ToolGateway, ToolScope } from "../src/ports.ts";

/**
 * A stand-in for mcp-gateway while it is being built: deterministic tools with the gateway's
 * contract (`server.tool` names, errors as `isError` content). Tests that need masking, real
 * MCP servers or replica affinity use the real gateway instead.
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
    if (this.delayMs > 0) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, this.delayMs);
        signal.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(signal.reason);
        });
      });
    }
    const [server, tool] = call.name.split(".");
    const run = tool ? this.results[tool] : undefined;
    const args = JSON.parse(call.arguments || "{}") as Record<string, unknown>;
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
