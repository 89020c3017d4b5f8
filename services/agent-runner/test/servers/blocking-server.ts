/**
 * An MCP server built with the real SDK, run over stdio by mcp-gateway in the runner's tests.
 * Its one tool, `wait`, blocks until its call is aborted and appends what it saw to the file
 * named by BLOCKING_SERVER_LOG: `started <call>` when called, `aborted <call>` when the SDK
 * aborts the call's signal (a `notifications/cancelled`, or the session closing under it).
 */
import { appendFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const log = process.env.BLOCKING_SERVER_LOG;
if (!log) throw new Error("BLOCKING_SERVER_LOG is not set");

const server = new Server({ name: "blocking", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: "wait",
      description: "blocks until the call is aborted",
      inputSchema: { type: "object", properties: { call: { type: "string" } } },
      annotations: { readOnlyHint: true },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  const call = String(request.params.arguments?.call ?? "");
  appendFileSync(log, `started ${call}\n`);
  await new Promise<void>((resolve) => {
    if (extra.signal.aborted) resolve();
    extra.signal.addEventListener("abort", () => resolve(), { once: true });
  });
  appendFileSync(log, `aborted ${call}\n`);
  return { content: [{ type: "text", text: "aborted" }], isError: true };
});

// A stdio server's session ends when its client closes stdin: close the server then, which
// aborts every call still running (the SDK's transport alone does not watch for the end).
process.stdin.on("end", () => void server.close());
await server.connect(new StdioServerTransport());
