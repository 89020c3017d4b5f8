import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerConfig } from "@tarsy/config";
import { withTimeout } from "@tarsy/runtime";
import { InitFailedError, OperationTimeoutError, SessionClosedError } from "../errors.ts";
import { createTransport, type TransportDeps } from "./transport.ts";

const CLIENT_INFO = { name: "tarsy-mcp-gateway", version: "1.0.0" };

/** One initialized MCP session with one server. */
export interface McpConnection {
  readonly serverId: string;
  /** Distinct per session; tells a re-created session from the one it replaced. */
  readonly sessionNo: number;
  readonly pid: number | null;
  isClosed(): boolean;
  /** Called once when the session ends, closed here or by the server (its process died). */
  onClose(listener: () => void): void;
  /** An MCP ping: the server still answers. */
  ping(timeoutMs: number): Promise<void>;
  listTools(timeoutMs: number): Promise<Tool[]>;
  callTool(name: string, args: Record<string, unknown>, timeoutMs: number): Promise<CallToolResult>;
  close(): Promise<void>;
}

let sessionCounter = 0;

/** Races an operation against a deadline; the deadline error is never retried. */
function withDeadline<T>(operation: string, ms: number, work: Promise<T>): Promise<T> {
  return withTimeout(work, ms, () => new OperationTimeoutError(operation, ms));
}

/** Starts the transport and runs the MCP initialize handshake within `initTimeoutMs`. */
export async function openConnection(
  config: McpServerConfig,
  deps: TransportDeps,
  initTimeoutMs: number,
): Promise<McpConnection> {
  const opened = createTransport(config, deps);
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  let closed = false;
  const closeListeners: (() => void)[] = [];
  client.onclose = () => {
    closed = true;
    for (const listener of closeListeners.splice(0)) listener();
  };
  // Transport errors also surface as rejected requests; keep them off the process.
  client.onerror = () => {};
  const shutdown = async () => {
    closed = true;
    await client.close().catch(() => {});
    await opened.dispose().catch(() => {});
  };
  try {
    await withDeadline(
      `initializing MCP server "${config.id}"`,
      initTimeoutMs,
      client.connect(opened.transport, { timeout: initTimeoutMs }),
    );
  } catch (err) {
    await shutdown();
    throw new InitFailedError(config.id, { cause: err });
  }
  const sessionNo = ++sessionCounter;
  const ensureOpen = () => {
    if (closed)
      throw new SessionClosedError(`the session with "${config.id}" is closed: not connected`);
  };
  return {
    serverId: config.id,
    sessionNo,
    pid: opened.pid(),
    isClosed: () => closed,
    onClose(listener) {
      if (closed) listener();
      else closeListeners.push(listener);
    },
    async ping(timeoutMs) {
      ensureOpen();
      await withDeadline(`pinging MCP server "${config.id}"`, timeoutMs, client.ping());
    },
    async listTools(timeoutMs) {
      ensureOpen();
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { timeout: timeoutMs });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      return tools;
    },
    async callTool(name, args, timeoutMs) {
      ensureOpen();
      const result = await client.callTool({ name, arguments: args }, undefined, {
        timeout: timeoutMs,
      });
      return result as CallToolResult;
    },
    close: shutdown,
  };
}
