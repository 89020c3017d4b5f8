import { status } from "@grpc/grpc-js";

/** Errors of the gRPC call itself (provider failures arrive as `error` chunks instead). */
export abstract class LlmClientError extends Error {
  abstract readonly code: LlmClientErrorCode;
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
  | "LLM_UNAVAILABLE"
  | "LLM_DEADLINE_EXCEEDED"
  | "LLM_CANCELLED"
  | "LLM_INVALID_ARGUMENT"
  | "LLM_INVALID_RESPONSE"
  | "LLM_RPC_FAILED";

/** llm-service cannot be reached (down, restarting, connection refused). Retry later. */
export class LlmUnavailableError extends LlmClientError {
  readonly code = "LLM_UNAVAILABLE" as const;
}
/** The deadline passed before the stream finished; llm-service aborted the provider call. */
export class LlmDeadlineExceededError extends LlmClientError {
  readonly code = "LLM_DEADLINE_EXCEEDED" as const;
}
/** The caller's AbortSignal fired; llm-service aborted the provider call. */
export class LlmCancelledError extends LlmClientError {
  readonly code = "LLM_CANCELLED" as const;
}
/** llm-service rejected the request (bad messages, unknown backend). Not retryable. */
export class LlmInvalidArgumentError extends LlmClientError {
  readonly code = "LLM_INVALID_ARGUMENT" as const;
}
/** A response chunk did not match the contract. */
export class LlmInvalidResponseError extends LlmClientError {
  readonly code = "LLM_INVALID_RESPONSE" as const;
}
/** Any other gRPC failure (INTERNAL, UNKNOWN …). */
export class LlmRpcError extends LlmClientError {
  readonly code = "LLM_RPC_FAILED" as const;
}

export function fromGrpcError(err: unknown): LlmClientError {
  const e = err as { code?: number; details?: string; message?: string };
  const message = e.details || e.message || String(err);
  switch (e.code) {
    case status.UNAVAILABLE:
      return new LlmUnavailableError(`llm-service unavailable: ${message}`, e.code, { cause: err });
    case status.DEADLINE_EXCEEDED:
      return new LlmDeadlineExceededError(`llm-service deadline exceeded: ${message}`, e.code, {
        cause: err,
      });
    case status.CANCELLED:
      return new LlmCancelledError(`llm call cancelled: ${message}`, e.code, { cause: err });
    case status.INVALID_ARGUMENT:
      return new LlmInvalidArgumentError(message, e.code, { cause: err });
    default:
      return new LlmRpcError(`llm-service call failed: ${message}`, e.code, { cause: err });
  }
}
