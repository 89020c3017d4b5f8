/**
 * An MCP server built with the real SDK (Streamable HTTP on /mcp) that keys its state by the
 * `X-Session-ID` header, like the Go TARSy's cli-mcp-server: `whoami` answers the header it
 * got, every request's header is recorded, and `DELETE /sessions/:id` records the cleanup and
 * answers the status the test chose.
 */

import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

export interface SessionServer {
  /** Base URL (`http://127.0.0.1:PORT`); MCP is at `/mcp`, cleanup at `/sessions/:id`. */
  base: string;
  /** `X-Session-ID` of every MCP request (null when absent), in order. */
  sessionHeaders: Array<string | null>;
  /** Session ids deleted through `/sessions/:id`, in order. */
  deleted: string[];
  /** The status DELETE answers (default 204). */
  deleteStatus: number;
  close(): Promise<void>;
}

const header = (req: IncomingMessage): string | null => {
  const value = req.headers["x-session-id"];
  return typeof value === "string" ? value : null;
};

function createMcp(): Server {
  const server = new Server(
    { name: "sessions", version: "1.0.0" },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      {
        name: "whoami",
        description: "the sandbox serving you",
        inputSchema: { type: "object" },
        annotations: { readOnlyHint: true },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (_request, extra) => {
    const id = extra.requestInfo?.headers["x-session-id"];
    return { content: [{ type: "text", text: `sandbox:${typeof id === "string" ? id : "none"}` }] };
  });
  return server;
}

export async function startSessionServer(): Promise<SessionServer> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const state: Omit<SessionServer, "base" | "close"> = {
    sessionHeaders: [],
    deleted: [],
    deleteStatus: 204,
  };
  const http = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname.startsWith("/sessions/")) {
      if (req.method !== "DELETE") return void res.writeHead(405).end();
      state.deleted.push(decodeURIComponent(url.pathname.slice("/sessions/".length)));
      return void res.writeHead(server.deleteStatus).end();
    }
    state.sessionHeaders.push(header(req));
    let parsed: unknown;
    if (req.method === "POST") {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const raw = Buffer.concat(chunks).toString("utf8");
      parsed = raw ? JSON.parse(raw) : undefined;
    }
    const sid = req.headers["mcp-session-id"];
    let transport = typeof sid === "string" ? transports.get(sid) : undefined;
    if (!transport) {
      const t = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void transports.set(id, t),
      });
      t.onclose = () => {
        if (t.sessionId) transports.delete(t.sessionId);
      };
      await createMcp().connect(t);
      transport = t;
    }
    await transport.handleRequest(req, res, parsed);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const port = (http.address() as AddressInfo).port;
  const server: SessionServer = Object.assign(state, {
    base: `http://127.0.0.1:${port}`,
    async close() {
      for (const t of transports.values()) await t.close().catch(() => {});
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  });
  return server;
}
