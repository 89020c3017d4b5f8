import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { Agent, fetch as undiciFetch } from "undici";
import { currentCallCredential } from "../auth/call-credentials.ts";

export interface HttpClientOptions {
  bearerToken?: string | undefined;
  /** false accepts any server certificate (self-signed test clusters); default true. */
  verifySsl: boolean;
  /** Time to the response headers of one HTTP request; SSE streams stay open after that. */
  timeoutMs?: number | undefined;
  customHeaders: Record<string, string>;
}

export interface HttpClient {
  fetch: FetchLike;
  /** Headers every request carries (custom headers, then the bearer token). */
  headers: Record<string, string>;
  close(): Promise<void>;
}

/** An HTTP client for one MCP server connection: auth header, TLS switch and timeout. */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  const agent = new Agent({
    connect: { rejectUnauthorized: options.verifySsl },
    ...(options.timeoutMs
      ? { headersTimeout: options.timeoutMs, connectTimeout: options.timeoutMs }
      : {}),
    // Long-lived SSE streams must not be cut for being quiet.
    bodyTimeout: 0,
  });
  const headers: Record<string, string> = { ...options.customHeaders };
  if (options.bearerToken) headers.Authorization = `Bearer ${options.bearerToken}`;
  const fetchImpl: FetchLike = async (url, init) => {
    const merged = new Headers(init?.headers);
    for (const [name, value] of Object.entries(headers)) {
      if (!merged.has(name)) merged.set(name, value);
    }
    // A per-user call's credential replaces the shared one for this request only.
    const credential = currentCallCredential();
    if (credential) merged.set("Authorization", `Bearer ${credential.bearer}`);
    const response = await undiciFetch(url, {
      ...(init as Record<string, unknown>),
      headers: merged,
      dispatcher: agent,
    } as Parameters<typeof undiciFetch>[1]);
    return response as unknown as Response;
  };
  return {
    fetch: fetchImpl,
    headers,
    close: () => agent.close(),
  };
}
