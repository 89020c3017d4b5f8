/** Errors raised inside the gateway; tool-level problems never escape as these, they become content. */
export type GatewayErrorCode =
  | "mcp_server_not_configured"
  | "mcp_transport_config"
  | "mcp_init_failed"
  | "mcp_operation_timeout"
  | "mcp_session_closed"
  | "mcp_user_credentials_missing"
  | "mcp_token_exchange_failed";

export abstract class GatewayError extends Error {
  abstract readonly code: GatewayErrorCode;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class ServerNotConfiguredError extends GatewayError {
  readonly code = "mcp_server_not_configured" as const;
  constructor(readonly serverId: string) {
    super(`MCP server "${serverId}" is not configured`);
  }
}

export class TransportConfigError extends GatewayError {
  readonly code = "mcp_transport_config" as const;
}

export class InitFailedError extends GatewayError {
  readonly code = "mcp_init_failed" as const;
  constructor(
    readonly serverId: string,
    options: { cause?: unknown },
  ) {
    super(`failed to initialize MCP server "${serverId}": ${describe(options.cause)}`, options);
  }
}

export class OperationTimeoutError extends GatewayError {
  readonly code = "mcp_operation_timeout" as const;
  constructor(
    readonly operation: string,
    readonly timeoutMs: number,
  ) {
    super(`${operation} timed out after ${timeoutMs} ms`);
    // Classified like an abort: never retried.
    this.name = "TimeoutError";
  }
}

export class SessionClosedError extends GatewayError {
  readonly code = "mcp_session_closed" as const;
}

/** A per-user server was called with no user token and no fallback to shared credentials. */
export class UserCredentialsMissingError extends GatewayError {
  readonly code = "mcp_user_credentials_missing" as const;
  constructor(readonly serverId: string) {
    super(`per-user credentials required for server ${serverId}; none available`);
  }
}

/** The STS refused or failed a token exchange (the message never holds a token). */
export class TokenExchangeError extends GatewayError {
  readonly code = "mcp_token_exchange_failed" as const;
  constructor(
    readonly serverId: string,
    reason: string,
  ) {
    super(`token exchange for server ${serverId} failed: ${reason}`);
  }
}

export function describe(err: unknown): string {
  if (err instanceof Error) {
    const message = err.message || err.name;
    const cause =
      err.cause instanceof Error && !message.includes(err.cause.message)
        ? ` (${err.cause.message})`
        : "";
    return `${message}${cause}`;
  }
  return String(err);
}
