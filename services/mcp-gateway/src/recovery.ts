import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { SessionClosedError } from "./errors.ts";

/** What to do after an MCP operation failed. */
export type RecoveryAction = "no_retry" | "retry_same_session" | "retry_new_session";

export const MAX_RETRIES = 1;
export const RETRY_BACKOFF_MIN_MS = 250;
export const RETRY_BACKOFF_MAX_MS = 750;

/** Jittered backoff in [250, 750) ms. */
export function retryBackoffMs(random: () => number = Math.random): number {
  return (
    RETRY_BACKOFF_MIN_MS + Math.floor(random() * (RETRY_BACKOFF_MAX_MS - RETRY_BACKOFF_MIN_MS))
  );
}

const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTCONN",
  "ERR_STREAM_DESTROYED",
  "ERR_STREAM_WRITE_AFTER_END",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
]);
const TIMEOUT_CODES = new Set([
  "ETIMEDOUT",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);
const CONNECTION_MESSAGES =
  /connection closed|not connected|socket hang up|broken pipe|\bEOF\b|fetch failed|other side closed|session not found|terminated/i;

function codeOf(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}

/** The error and its causes, outermost first (bounded). */
function chain(err: unknown): unknown[] {
  const out: unknown[] = [];
  let current: unknown = err;
  while (current !== undefined && current !== null && out.length < 5) {
    out.push(current);
    current = current instanceof Error ? current.cause : undefined;
  }
  return out;
}

/**
 * Classifies an MCP failure. Timeouts and cancellations are not retried (the server may be
 * slow); transport failures (closed connection, refused, reset, a dead subprocess, an expired
 * HTTP session) are retried once on a new session; protocol errors and anything unknown are not.
 */
export function classifyError(err: unknown): RecoveryAction {
  if (err === undefined || err === null) return "no_retry";
  const links = chain(err);
  for (const link of links) {
    if (link instanceof Error && (link.name === "AbortError" || link.name === "TimeoutError")) {
      return "no_retry";
    }
    const code = codeOf(link);
    if (code && TIMEOUT_CODES.has(code)) return "no_retry";
  }
  const head = links[0];
  if (head instanceof SessionClosedError) return "retry_new_session";
  if (head instanceof McpError) {
    if (head.code === ErrorCode.ConnectionClosed) return "retry_new_session";
    // Timeouts, parse errors, bad requests/params, unknown methods, server internals.
    return "no_retry";
  }
  for (const link of links) {
    const code = codeOf(link);
    if (code && CONNECTION_CODES.has(code)) return "retry_new_session";
    const status = (link as { code?: unknown }).code;
    // Streamable HTTP: 404 means the server dropped our session; 502/503 a restarting backend.
    if (
      link instanceof Error &&
      /StreamableHTTPError|SseError/.test(link.constructor.name) &&
      (status === 404 || status === 502 || status === 503)
    ) {
      return "retry_new_session";
    }
    if (link instanceof Error && CONNECTION_MESSAGES.test(link.message)) return "retry_new_session";
  }
  return "no_retry";
}
