/** Errors raised inside the gateway; tool-level problems never escape as these, they become content. */
export type GatewayErrorCode =
  | "MCP_SERVER_NOT_CONFIGURED"
  | "MCP_TRANSPORT_CONFIG"
  | "MCP_INIT_FAILED"
  | "MCP_OPERATION_TIMEOUT"
  | "MCP_SESSION_CLOSED";

export abstract class GatewayError extends Error {
  abstract readonly code: GatewayErrorCode;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class ServerNotConfiguredError extends GatewayError {
  readonly code = "MCP_SERVER_NOT_CONFIGURED" as const;
  constructor(readonly serverId: string) {
    super(`MCP server "${serverId}" is not configured`);
  }
}

export class TransportConfigError extends GatewayError {
  readonly code = "MCP_TRANSPORT_CONFIG" as const;
}

export class InitFailedError extends GatewayError {
  readonly code = "MCP_INIT_FAILED" as const;
  constructor(
    readonly serverId: string,
    options: { cause?: unknown },
  ) {
    super(`failed to initialize MCP server "${serverId}": ${describe(options.cause)}`, options);
  }
}

export class OperationTimeoutError extends GatewayError {
  readonly code = "MCP_OPERATION_TIMEOUT" as const;
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
  readonly code = "MCP_SESSION_CLOSED" as const;
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
