/** Why a runbook could not be fetched or listed; `code` says which rule or failure. */
export type RunbookErrorCode =
  | "url_not_allowed"
  | "address_not_allowed"
  | "redirect_refused"
  | "too_many_redirects"
  | "http_status"
  | "too_large"
  | "timeout"
  | "network"
  | "bad_response";

export class RunbookError extends Error {
  constructor(
    readonly code: RunbookErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "RunbookError";
  }
}

/** The RunbookError somewhere in `err`'s cause chain (undici wraps connect errors). */
export function findRunbookError(err: unknown): RunbookError | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current; depth++) {
    if (current instanceof RunbookError) return current;
    current = current instanceof Error ? current.cause : undefined;
  }
  return undefined;
}
