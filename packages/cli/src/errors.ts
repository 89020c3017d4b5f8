/** A failure a command reports as one line on stderr with exit code 1. */
export abstract class CliError extends Error {
  abstract readonly code: string;
}

/** The API answered 4xx/5xx; `apiCode` and the message come from its `{error:{code,message}}`. */
export class ApiRequestError extends CliError {
  readonly code = "cli_api_error" as const;
  constructor(
    readonly status: number,
    readonly apiCode: string,
    readonly apiMessage: string,
  ) {
    super(`API error ${status} ${apiCode}: ${apiMessage}`);
    this.name = "ApiRequestError";
  }
}

/** The API or WebSocket could not be reached at all. */
export class UnreachableError extends CliError {
  readonly code = "cli_unreachable" as const;
  constructor(what: string, url: string, cause: unknown) {
    super(`cannot reach ${what} at ${url}: ${describe(cause)}`, { cause });
    this.name = "UnreachableError";
  }
}

/**
 * The WebSocket's upgrade was answered with an HTTP error (e.g. 401 without a valid token);
 * the relay's `{error:{code,message}}` body, when there is one, says why.
 */
export class WebSocketRefusedError extends CliError {
  readonly code = "cli_ws_refused" as const;
  constructor(
    url: string,
    readonly status: number,
    error?: { code: string; message: string },
  ) {
    const why = error ? `${status} ${error.code}: ${error.message}` : `HTTP ${status}`;
    super(`the TARSy WebSocket at ${url} refused the connection: ${why}`);
    this.name = "WebSocketRefusedError";
  }
}

/** A server answered with something that is not what the contract says. */
export class BadResponseError extends CliError {
  readonly code = "cli_bad_response" as const;
  constructor(message: string) {
    super(message);
    this.name = "BadResponseError";
  }
}

/** An input file could not be read or is empty. */
export class InputError extends CliError {
  readonly code = "cli_input" as const;
  constructor(message: string) {
    super(message);
    this.name = "InputError";
  }
}

/** A short description of a network error (fetch wraps the real one in `cause`). */
export function describe(error: unknown): string {
  const cause = (error as { cause?: unknown } | null)?.cause;
  const inner = cause instanceof Error ? cause : error;
  const code = (inner as { code?: unknown } | null)?.code;
  const message = inner instanceof Error ? inner.message : String(inner);
  return typeof code === "string" && !message.includes(code) ? `${code} ${message}` : message;
}
