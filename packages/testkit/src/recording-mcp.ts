/**
 * Edges for the per-user credential tests: an MCP server built with the real SDK (Streamable
 * HTTP or SSE) that records the Authorization header of every request it receives, and a
 * loopback STS (RFC 8693) that records each exchange and answers `exchanged:<subject token>`.
 */

import { createHash, randomUUID } from "node:crypto";
import { createServer, type Server as HttpServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

export interface RecordedRequest {
  /** The JSON-RPC method of a POST (`initialize`, `tools/call` …); the HTTP method otherwise. */
  method: string;
  authorization: string | null;
}

export interface RecordingMcpServer {
  url: string;
  requests: RecordedRequest[];
  /** Authorization headers of the `tools/call` requests, in order. */
  toolCallBearers(): Array<string | null>;
  close(): Promise<void>;
}

/** What `whoami` answers: a digest of the Authorization it got (never the header itself). */
export function callerTag(authorization: string | string[] | null | undefined): string {
  const value = Array.isArray(authorization) ? authorization.join(",") : (authorization ?? "");
  return `caller:${createHash("sha256").update(value).digest("hex").slice(0, 16)}`;
}

function createMcp(): Server {
  const server = new Server(
    { name: "recording", version: "1.0.0" },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      {
        name: "whoami",
        description: "answers ok",
        inputSchema: { type: "object" },
        annotations: { readOnlyHint: true },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (_request, extra) => ({
    content: [{ type: "text", text: callerTag(extra.requestInfo?.headers.authorization) }],
  }));
  return server;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function methodsOf(body: unknown): string[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.map((m) =>
    typeof (m as { method?: unknown })?.method === "string"
      ? (m as { method: string }).method
      : "response",
  );
}

async function listen(http: HttpServer): Promise<number> {
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return (http.address() as AddressInfo).port;
}

async function closeHttp(http: HttpServer): Promise<void> {
  http.closeAllConnections();
  await new Promise<void>((resolve) => http.close(() => resolve()));
}

export async function startRecordingMcpServer(
  kind: "http" | "sse" = "http",
): Promise<RecordingMcpServer> {
  const requests: RecordedRequest[] = [];
  const streamable = new Map<string, StreamableHTTPServerTransport>();
  const sse = new Map<string, SSEServerTransport>();
  const http = createServer(async (req, res) => {
    const authorization = req.headers.authorization ?? null;
    let parsed: unknown;
    if (req.method === "POST") {
      const raw = await readBody(req);
      parsed = raw ? JSON.parse(raw) : undefined;
      for (const method of methodsOf(parsed)) requests.push({ method, authorization });
    } else {
      requests.push({ method: req.method ?? "?", authorization });
    }
    if (kind === "sse") {
      if (req.method === "GET") {
        const transport = new SSEServerTransport("/messages", res);
        sse.set(transport.sessionId, transport);
        transport.onclose = () => sse.delete(transport.sessionId);
        await createMcp().connect(transport);
        return;
      }
      const id = new URL(req.url ?? "/", "http://x").searchParams.get("sessionId") ?? "";
      const transport = sse.get(id);
      if (!transport) return void res.writeHead(404).end("no session");
      await transport.handlePostMessage(req, res, parsed);
      return;
    }
    const sid = req.headers["mcp-session-id"];
    let transport = typeof sid === "string" ? streamable.get(sid) : undefined;
    if (!transport) {
      const t = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void streamable.set(id, t),
      });
      t.onclose = () => {
        if (t.sessionId) streamable.delete(t.sessionId);
      };
      await createMcp().connect(t);
      transport = t;
    }
    await transport.handleRequest(req, res, parsed);
  });
  const port = await listen(http);
  return {
    url: `http://127.0.0.1:${port}/${kind === "sse" ? "sse" : "mcp"}`,
    requests,
    toolCallBearers: () =>
      requests.filter((r) => r.method === "tools/call").map((r) => r.authorization),
    async close() {
      for (const t of [...streamable.values(), ...sse.values()]) await t.close().catch(() => {});
      await closeHttp(http);
    },
  };
}

export interface StsRequest {
  authorization: string | null;
  contentType: string | null;
  form: Record<string, string>;
}

export interface FakeSts {
  url: string;
  requests: StsRequest[];
  /** Answer the next exchanges with this HTTP status and OAuth error code. */
  failWith(status: number, error: string): void;
  close(): Promise<void>;
}

/** A loopback STS: `access_token = exchanged:<subject_token>`, `expires_in` 300 s. */
export async function startFakeSts(): Promise<FakeSts> {
  const requests: StsRequest[] = [];
  let failure: { status: number; error: string } | undefined;
  const http = createServer(async (req, res) => {
    const form = Object.fromEntries(new URLSearchParams(await readBody(req)));
    requests.push({
      authorization: req.headers.authorization ?? null,
      contentType: req.headers["content-type"] ?? null,
      form,
    });
    res.setHeader("Content-Type", "application/json");
    if (failure) {
      res
        .writeHead(failure.status)
        .end(
          JSON.stringify({ error: failure.error, error_description: `bad ${form.subject_token}` }),
        );
      return;
    }
    res.writeHead(200).end(
      JSON.stringify({
        access_token: `exchanged:${form.subject_token}`,
        issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
        token_type: "Bearer",
        expires_in: 300,
      }),
    );
  });
  const port = await listen(http);
  return {
    url: `http://127.0.0.1:${port}/token`,
    requests,
    failWith(status, error) {
      failure = { status, error };
    },
    close: () => closeHttp(http),
  };
}
