/** Errors of the agent runner. Each has a readonly string-literal `code`. */
export type RunnerErrorCode =
  | "execution_aborted"
  | "iteration_timeout"
  | "llm_provider_error"
  | "llm_call_failed"
  | "llm_first_chunk_timeout"
  | "llm_stream_stalled"
  | "execution_not_found"
  | "execution_config_invalid"
  | "tool_gateway_failed"
  | "execution_taken_over"
  | "execution_suspended";

export abstract class RunnerError extends Error {
  abstract readonly code: RunnerErrorCode;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * Why an execution was stopped from outside. `shutdown` hands the work back for redelivery;
 * `superseded`: a redelivery gave it to a newer attempt.
 */
export type AbortReason = "cancelled" | "timed_out" | "shutdown" | "superseded";

/** The reason of an execution's AbortSignal. */
export class ExecutionAbortedError extends RunnerError {
  readonly code = "execution_aborted" as const;
  constructor(
    readonly reason: AbortReason,
    /** Says which limit ran out, for a timeout. */
    detail?: string,
  ) {
    super(
      detail ??
        (reason === "cancelled"
          ? "execution cancelled"
          : reason === "timed_out"
            ? "execution timed out"
            : reason === "superseded"
              ? "execution superseded by a newer attempt"
              : "runner shutting down; execution handed back"),
    );
  }
}

/** One LLM call took longer than the per-iteration timeout. */
export class IterationTimeoutError extends RunnerError {
  readonly code = "iteration_timeout" as const;
  constructor(readonly timeoutMs: number) {
    super(`LLM call timed out after ${timeoutMs} ms`);
  }
}

/** The provider answered with an error (its message is kept as is). */
export class LlmProviderError extends RunnerError {
  readonly code = "llm_provider_error" as const;
  constructor(
    readonly providerMessage: string,
    readonly providerCode: string,
    /** Part of the answer had been streamed before the failure. */
    readonly partialOutput = false,
    /** llm-service had retried this transient error as often as it may. */
    readonly retriesExhausted = false,
  ) {
    super(`LLM error: ${providerMessage}`);
  }
}

/**
 * The call to llm-service itself failed (unreachable past the retry budget, invalid
 * response …). The message already names the cause, so the client error is not chained as
 * `cause` (a log line would repeat it); `failureCode` keeps its code.
 */
export class LlmCallError extends RunnerError {
  readonly code = "llm_call_failed" as const;
  constructor(
    message: string,
    readonly failureCode: string,
    readonly attempts = 1,
  ) {
    super(message);
  }
}

/** llm-service sent nothing within the first-chunk timeout (the call is retried). */
export class LlmFirstChunkTimeoutError extends RunnerError {
  readonly code = "llm_first_chunk_timeout" as const;
  constructor(readonly timeoutMs: number) {
    super(`no answer from llm-service within ${timeoutMs} ms`);
  }
}

/** The stream stopped for longer than the stall timeout between chunks (the call is retried). */
export class LlmStreamStalledError extends RunnerError {
  readonly code = "llm_stream_stalled" as const;
  constructor(readonly timeoutMs: number) {
    super(`the llm-service stream stalled for ${timeoutMs} ms`);
  }
}

/** The requested execution does not exist (or not in the session the request names). */
export class ExecutionNotFoundError extends RunnerError {
  readonly code = "execution_not_found" as const;
  constructor(readonly executionId: string) {
    super(`agent execution ${executionId} does not exist`);
  }
}

/** A newer attempt (after a redelivery) owns the execution; this one must not report. */
export class ExecutionTakenOverError extends RunnerError {
  readonly code = "execution_taken_over" as const;
  constructor(
    readonly executionId: string,
    readonly attempt: number,
  ) {
    super(`execution ${executionId}: attempt ${attempt} was superseded by a newer attempt`);
  }
}

export class ExecutionConfigError extends RunnerError {
  readonly code = "execution_config_invalid" as const;
}

export class ToolGatewayError extends RunnerError {
  readonly code = "tool_gateway_failed" as const;
}

/** The execution's abort reason, when its signal fired. */
export function abortReasonOf(signal: AbortSignal): ExecutionAbortedError | undefined {
  if (!signal.aborted) return undefined;
  return signal.reason instanceof ExecutionAbortedError
    ? signal.reason
    : new ExecutionAbortedError("cancelled");
}

/** How events left open by an aborted execution end. */
export function abortedEventStatus(
  error: ExecutionAbortedError,
): "cancelled" | "timed_out" | "failed" {
  return error.reason === "cancelled" || error.reason === "timed_out" ? error.reason : "failed";
}

/**
 * Not a failure: the execution waits for its sub-agents with no runner holding it. Its
 * request comes back (`resume`) when the next sub-agent ends.
 */
export class ExecutionSuspendedError extends RunnerError {
  readonly code = "execution_suspended" as const;
  constructor(
    readonly executionId: string,
    /** What it waits for: its sub-agents' results, or a person's decision on an action. */
    readonly waitsFor: "sub_agents" | "approval" = "sub_agents",
  ) {
    super(
      `execution ${executionId} is waiting for ${waitsFor === "approval" ? "an approval" : "its sub-agents"}`,
    );
  }
}
