import { status } from "@grpc/grpc-js";

/** Errors of the gRPC call itself (provider failures arrive as `error` chunks instead). */
export abstract class LlmClientError extends Error {
  abstract readonly code: LlmClientErrorCode;
  /** The gRPC status details, when the error came from a gRPC status. */
  details?: string;
  constructor(
    message: string,
    readonly grpcCode?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

export type LlmClientErrorCode =
  | "llm_unavailable"
  | "llm_deadline_exceeded"
  | "llm_cancelled"
  | "llm_invalid_argument"
  | "llm_invalid_response"
  | "llm_stream_incomplete"
  | "llm_rpc_failed";

/** llm-service cannot be reached (down, restarting, connection refused). Retry later. */
export class LlmUnavailableError extends LlmClientError {
  readonly code = "llm_unavailable" as const;
}
/** The deadline passed before the stream finished; llm-service aborted the provider call. */
export class LlmDeadlineExceededError extends LlmClientError {
  readonly code = "llm_deadline_exceeded" as const;
}
/** The caller's AbortSignal fired; llm-service aborted the provider call. */
export class LlmCancelledError extends LlmClientError {
  readonly code = "llm_cancelled" as const;
}
/** llm-service rejected the request (bad messages, unknown backend). Not retryable. */
export class LlmInvalidArgumentError extends LlmClientError {
  readonly code = "llm_invalid_argument" as const;
}
/** A response chunk did not match the contract. */
export class LlmInvalidResponseError extends LlmClientError {
  readonly code = "llm_invalid_response" as const;
}
/** The stream ended (the server went away) before its final chunk: the answer is partial. */
export class LlmStreamIncompleteError extends LlmClientError {
  readonly code = "llm_stream_incomplete" as const;
}
/** Any other gRPC failure (INTERNAL, UNKNOWN …). */
export class LlmRpcError extends LlmClientError {
  readonly code = "llm_rpc_failed" as const;
}

/**
 * The typed error of a failed gRPC call. Its message names the cause once: the status
 * details are in it, so the gRPC error (whose message repeats them) is not kept as `cause`
 * (log serializers append every cause's message); `grpcCode` and `details` keep the facts.
 */
export function fromGrpcError(err: unknown): LlmClientError {
  const e = err as { code?: number; details?: string; message?: string };
  const details = e.details || e.message || String(err);
  const code = typeof e.code === "number" ? e.code : undefined;
  const make = (): LlmClientError => {
    switch (code) {
      case status.UNAVAILABLE:
        return new LlmUnavailableError(`llm-service unavailable: ${details}`, code);
      case status.DEADLINE_EXCEEDED:
        return new LlmDeadlineExceededError(`llm-service deadline exceeded: ${details}`, code);
      case status.CANCELLED:
        return new LlmCancelledError(`llm call cancelled: ${details}`, code);
      case status.INVALID_ARGUMENT:
        return new LlmInvalidArgumentError(details, code);
      default:
        return new LlmRpcError(`llm-service call failed: ${details}`, code);
    }
  };
  const error = make();
  error.details = details;
  return error;
}
