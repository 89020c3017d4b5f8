/**
 * An MCP server built with the real SDK for the gateway's tests. Run over stdio
 * (`tsx fixture-server.ts`) or served over Streamable HTTP in-process (`serveFixtureHttp`).
 */

import { randomUUID } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import {
  CONFIGMAP_YAML,
  SECRET_JSON,
  SECRET_LIST_JSON,
  SECRET_YAML,
  TOKENS_TEXT,
} from "./fixtures.ts";

const obj = (properties: Record<string, unknown> = {}) => ({ type: "object" as const, properties });

const TOOLS = [
  {
    name: "get_secret_yaml",
    description: "kubectl get secret -o yaml (multi-doc)",
    inputSchema: obj(),
  },
  { name: "get_secret_json", description: "kubectl get secret -o json (List)", inputSchema: obj() },
  {
    name: "get_secretlist_json",
    description: "kubectl get secrets -o json (SecretList)",
    inputSchema: obj(),
  },
  { name: "env_dump", description: "tokens, passwords, keys, certs", inputSchema: obj() },
  { name: "get_configmap", description: "a ConfigMap", inputSchema: obj() },
  {
    name: "crash_once",
    description: "exits mid-call unless the marker file exists",
    inputSchema: obj(),
  },
  { name: "hang", description: "never answers", inputSchema: obj() },
  { name: "whoami", description: "process and session identity", inputSchema: obj() },
  {
    name: "env_var",
    description: "the value of one environment variable",
    inputSchema: obj({ name: { type: "string" } }),
  },
  { name: "echo_args", description: "returns its arguments as JSON", inputSchema: obj() },
  {
    name: "big",
    description: "returns `bytes` bytes of text",
    inputSchema: obj({ bytes: { type: "number" } }),
  },
  { name: "fail", description: "returns an isError result", inputSchema: obj() },
].map((tool) => ({ ...tool, annotations: { readOnlyHint: true } }));

/**
 * Tools that change things, each class told another way: by no annotation at all (mutating by
 * default), by `readOnlyHint: false`, and a read-only annotation on a tool named like a writer.
 */
const WRITERS = [
  {
    name: "restart_service",
    description: "restarts the service (no annotations)",
    inputSchema: obj({ name: { type: "string" } }),
  },
  {
    name: "delete_volume",
    description: "deletes a volume",
    inputSchema: obj({ name: { type: "string" } }),
    annotations: { readOnlyHint: false, destructiveHint: true },
  },
  {
    name: "delete_preview",
    description: "shows what a delete would remove",
    inputSchema: obj(),
    annotations: { readOnlyHint: true },
  },
];

const text = (t: string, isError = false): CallToolResult => ({
  content: [{ type: "text", text: t }],
  ...(isError ? { isError: true } : {}),
});

export function createFixtureServer(sessionLabel: string): Server {
  const server = new Server(
    { name: "tarsy-fixture", version: "1.0.0" },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...TOOLS, ...WRITERS],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    switch (request.params.name) {
      case "get_secret_yaml":
        return text(SECRET_YAML);
      case "get_secret_json":
        return text(SECRET_JSON);
      case "get_secretlist_json":
        return text(SECRET_LIST_JSON);
      case "env_dump":
        return text(TOKENS_TEXT);
      case "get_configmap":
        return text(CONFIGMAP_YAML);
      case "crash_once": {
        const marker = process.env.CRASH_MARKER;
        if (marker && !existsSync(marker)) {
          writeFileSync(marker, String(process.pid));
          process.exit(3);
        }
        return text(`survived pid=${process.pid}`);
      }
      case "hang":
        return new Promise<CallToolResult>(() => {});
      case "whoami":
        return text(JSON.stringify({ pid: process.pid, session: sessionLabel }));
      case "env_var":
        return text(JSON.stringify({ value: process.env[String(args.name)] ?? null }));
      case "echo_args":
        return text(JSON.stringify(args));
      case "big":
        return text("x".repeat(Number(args.bytes ?? 1000)));
      case "fail":
        return text("the backend said no", true);
      case "restart_service":
        return text(`restarted ${String(args.name)}`);
      case "delete_volume":
        return text(`deleted ${String(args.name)}`);
      case "delete_preview":
        return text("would delete: nothing");
      default:
        throw new Error(`unknown tool ${request.params.name}`);
    }
  });
  return server;
}

export interface FixtureHttpServer {
  url: string;
  port: number;
  /** Sessions created so far (one per MCP client session). */
  sessions(): number;
  close(): Promise<void>;
}

/** Serves the fixture over Streamable HTTP at `/mcp`; `port` 0 picks one. */
export async function serveFixtureHttp(
  port = 0,
  options: {
    requireBearer?: string;
    requireHeader?: [string, string];
    tls?: { key: string; cert: string };
  } = {},
): Promise<FixtureHttpServer> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let created = 0;
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    if (options.requireBearer && req.headers.authorization !== `Bearer ${options.requireBearer}`) {
      res.writeHead(401).end("unauthorized");
      return;
    }
    if (
      options.requireHeader &&
      req.headers[options.requireHeader[0]] !== options.requireHeader[1]
    ) {
      res.writeHead(403).end("missing header");
      return;
    }
    const sid = req.headers["mcp-session-id"];
    let transport = typeof sid === "string" ? transports.get(sid) : undefined;
    if (!transport) {
      if (typeof sid === "string") {
        res.writeHead(404).end("session not found");
        return;
      }
      const label = `http-${++created}`;
      const t = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          transports.set(id, t);
        },
      });
      t.onclose = () => {
        if (t.sessionId) transports.delete(t.sessionId);
      };
      await createFixtureServer(label).connect(t);
      transport = t;
    }
    await transport.handleRequest(req, res);
  };
  const http: HttpServer = options.tls
    ? createHttpsServer(options.tls, handler)
    : createServer(handler);
  await new Promise<void>((resolve) => http.listen(port, "127.0.0.1", resolve));
  const actual = (http.address() as AddressInfo).port;
  return {
    url: `${options.tls ? "https" : "http"}://127.0.0.1:${actual}/mcp`,
    port: actual,
    sessions: () => created,
    async close() {
      for (const t of transports.values()) await t.close().catch(() => {});
      transports.clear();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  await createFixtureServer(`stdio-${process.pid}`).connect(new StdioServerTransport());
}
