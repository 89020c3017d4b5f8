import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpServerConfig } from "@tarsy/config";
import { TransportConfigError } from "../errors.ts";
import { createHttpClient } from "./http-fetch.ts";
import { resolveCustomHeaders } from "./session-cleanup.ts";

export interface TransportDeps {
  /** The environment a stdio server inherits (the gateway's own); config `env` overrides it. */
  inheritedEnv: Readonly<Record<string, string | undefined>>;
  /** The agent execution these sessions serve (fills `{{.SESSION_ID}}`); none for health checks. */
  executionId?: string | undefined;
}

export interface OpenedTransport {
  transport: Transport;
  /** Releases what the transport holds beyond `transport.close()` (HTTP connection pools). */
  dispose(): Promise<void>;
  /** The subprocess id for stdio servers. */
  pid(): number | null;
}

/** Builds the MCP SDK transport of one server from its config (not yet started). */
export function createTransport(config: McpServerConfig, deps: TransportDeps): OpenedTransport {
  const t = config.transport;
  switch (t.type) {
    case "stdio": {
      if (!t.command)
        throw new TransportConfigError(`server "${config.id}": stdio needs a command`);
      const env: Record<string, string> = {};
      for (const [k, v] of Object.entries(deps.inheritedEnv)) if (v !== undefined) env[k] = v;
      Object.assign(env, t.env);
      const transport = new StdioClientTransport({
        command: t.command,
        args: t.args,
        env,
        // A server's stderr may carry secrets: it never reaches our logs.
        stderr: "ignore",
      });
      return { transport, dispose: async () => {}, pid: () => transport.pid };
    }
    case "http":
    case "sse": {
      let url: URL;
      try {
        url = new URL(t.url);
      } catch (err) {
        throw new TransportConfigError(`server "${config.id}": invalid url`, { cause: err });
      }
      const http = createHttpClient({
        bearerToken: t.bearer_token,
        verifySsl: t.verify_ssl,
        timeoutMs: t.timeout_ms,
        customHeaders: resolveCustomHeaders(t.custom_headers, deps.executionId),
      });
      const transport =
        t.type === "http"
          ? new StreamableHTTPClientTransport(url, { fetch: http.fetch })
          : new SSEClientTransport(url, { fetch: http.fetch });
      return { transport, dispose: () => http.close(), pid: () => null };
    }
    default: {
      const unknown: never = t;
      throw new TransportConfigError(`unsupported transport ${JSON.stringify(unknown)}`);
    }
  }
}
