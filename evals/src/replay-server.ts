/**
 * The replay MCP server: a real MCP server (the SDK's Streamable HTTP transport) that answers
 * each case's recorded tool calls under the original server and tool names. One HTTP listener
 * serves every server of the catalog at `/mcp/<server>`. Each request names the agent execution
 * it belongs to in the `x-tarsy-execution` header (mcp-gateway fills `{{.SESSION_ID}}` in a
 * server's `custom_headers` with the execution's id); `resolveCase` maps it to a case, waiting
 * briefly for the harness to register a session it has just submitted. Recordings and misses
 * are kept per session, so two runs of one case never mix.
 */

import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import type { Recording } from "./case.ts";
import type { ServerCatalog } from "./servers.ts";

export const EXECUTION_HEADER = "x-tarsy-execution";

export interface ToolMiss {
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
  /** Why: no case for the execution, or no recording matching the call. */
  reason: "unknown_execution" | "no_recording";
}

export interface ReplayServer {
  /** `http://127.0.0.1:<port>/mcp/<server>`. */
  urlOf(server: string): string;
  /** `http://127.0.0.1:<port>/runbooks/<case>.md`: the case's runbook file, as TARSy fetches it. */
  runbookUrlOf(caseId: string): string;
  /** Calls no recording answered, per session (`""`: calls whose session was never found). */
  misses(sessionId: string): ToolMiss[];
  /** Calls answered from a recording, per session. */
  served(sessionId: string): number;
  close(): Promise<void>;
}

export interface ReplayServerOptions {
  catalog: ServerCatalog;
  /** The recordings of the case a session runs. */
  recordingsOf(sessionId: string): Recording[] | undefined;
  /** The session an agent execution belongs to, or undefined while it is not known (yet). */
  resolveSession(executionId: string): Promise<string | undefined>;
  /** How long a call waits for its execution's session to become known. */
  resolveTimeoutMs?: number;
  /** The text of a case's runbook file (undefined: the case has none). */
  runbookOf?(caseId: string): string | undefined;
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([x], [y]) => x.localeCompare(y))
        .map(([k, v]) => [k, canonical(v)]),
    );
  }
  return value;
}

/** The first recording of the server and tool whose `args` are all equal in the call's arguments. */
export function findRecording(
  recordings: readonly Recording[],
  server: string,
  tool: string,
  args: Record<string, unknown>,
): Recording | undefined {
  return recordings.find(
    (r) =>
      r.server === server &&
      r.tool === tool &&
      Object.entries(r.args).every(([k, v]) => deepEqual(args[k], v)),
  );
}

function resultOf(recording: Recording): CallToolResult {
  if (recording.error !== undefined) {
    return { content: [{ type: "text", text: recording.error }], isError: true };
  }
  const text =
    typeof recording.result === "string"
      ? recording.result
      : JSON.stringify(recording.result, null, 2);
  return { content: [{ type: "text", text }] };
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString("utf8");
  return raw ? JSON.parse(raw) : undefined;
}

export async function startReplayServer(options: ReplayServerOptions): Promise<ReplayServer> {
  const missesBySession = new Map<string, ToolMiss[]>();
  const servedBySession = new Map<string, number>();
  const sessionOfExecution = new Map<string, string>();
  const timeoutMs = options.resolveTimeoutMs ?? 15_000;

  const sessionFor = async (executionId: string): Promise<string | undefined> => {
    if (!executionId) return undefined;
    const known = sessionOfExecution.get(executionId);
    if (known) return known;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = await options.resolveSession(executionId);
      if (found) {
        sessionOfExecution.set(executionId, found);
        return found;
      }
      if (Date.now() > deadline) return undefined;
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  const miss = (sessionId: string, m: ToolMiss): never => {
    const list = missesBySession.get(sessionId) ?? [];
    list.push(m);
    missesBySession.set(sessionId, list);
    throw new McpError(
      ErrorCode.InvalidParams,
      `fixture miss: no recorded result for ${m.server}.${m.tool} ${JSON.stringify(m.arguments)}`,
    );
  };

  const createMcp = (server: string): Server => {
    const entry = options.catalog.servers[server];
    const mcp = new Server(
      { name: `replay-${server}`, version: "1.0.0" },
      { capabilities: { tools: {} }, instructions: entry?.instructions },
    );
    mcp.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: entry?.tools ?? [] }));
    mcp.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const tool = request.params.name;
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      const header = extra.requestInfo?.headers[EXECUTION_HEADER];
      const executionId = typeof header === "string" ? header : "";
      const sessionId = await sessionFor(executionId);
      if (!sessionId) {
        return miss("", { server, tool, arguments: args, reason: "unknown_execution" });
      }
      const recording = findRecording(options.recordingsOf(sessionId) ?? [], server, tool, args);
      if (!recording)
        return miss(sessionId, { server, tool, arguments: args, reason: "no_recording" });
      servedBySession.set(sessionId, (servedBySession.get(sessionId) ?? 0) + 1);
      return resultOf(recording);
    });
    return mcp;
  };

  const transports = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", "http://replay");
      const runbookCase = /^\/runbooks\/([\w-]+)\.md$/.exec(url.pathname)?.[1];
      if (runbookCase !== undefined && req.method === "GET") {
        const text = options.runbookOf?.(runbookCase);
        if (text === undefined) res.writeHead(404).end("no runbook");
        else res.writeHead(200, { "content-type": "text/markdown; charset=utf-8" }).end(text);
        return;
      }
      const server = /^\/mcp\/([\w-]+)$/.exec(url.pathname)?.[1];
      if (!server || !options.catalog.servers[server]) {
        res.writeHead(404).end("unknown MCP server");
        return;
      }
      const body = req.method === "POST" ? await readBody(req) : undefined;
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
        await createMcp(server).connect(t);
        transport = t;
      }
      await transport.handleRequest(req, res, body);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    }
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const port = (http.address() as AddressInfo).port;

  return {
    urlOf: (server) => `http://127.0.0.1:${port}/mcp/${server}`,
    runbookUrlOf: (caseId) => `http://127.0.0.1:${port}/runbooks/${caseId}.md`,
    misses: (sessionId) => missesBySession.get(sessionId) ?? [],
    served: (sessionId) => servedBySession.get(sessionId) ?? 0,
    async close() {
      for (const t of transports.values()) await t.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
