import { LlmClientError, type LlmClientErrorCode } from "@tarsy/llm-client";
import {
  ExecutionAbortedError,
  IterationTimeoutError,
  LlmFirstChunkTimeoutError,
  LlmProviderError,
  LlmStreamStalledError,
} from "./errors.ts";

/**
 * What a failed LLM call means for the runner:
 * - `transport`: llm-service was unreachable or restarting, or the stream was cut, ended
 *   without its final chunk or stalled. The partial answer is void; the call is retried
 *   against llm-service (any replica) within the retry budget.
 * - `provider`: the provider's failure, reported in-band by llm-service (which already
 *   retried what was transient). Not retried here; a provider fallback builds on this kind.
 * - `rejected`: the request or the response is wrong; the same call would fail again.
 * - `aborted`: the execution was stopped, or the iteration timeout ended the call.
 */
export type LlmFailureKind = "transport" | "provider" | "rejected" | "aborted";

function clientFailureKind(code: LlmClientErrorCode): LlmFailureKind {
  switch (code) {
    case "llm_unavailable":
    case "llm_stream_incomplete":
    case "llm_deadline_exceeded":
    // The runner's own cancellations are classified before this (as `aborted`): a
    // cancellation that reaches here came from llm-service shutting down.
    case "llm_cancelled":
      return "transport";
    case "llm_invalid_argument":
    case "llm_invalid_response":
    case "llm_rpc_failed":
      return "rejected";
    default: {
      const unreachable: never = code;
      throw new Error(`unknown llm client error code ${String(unreachable)}`);
    }
  }
}

/** The one place that decides which LLM failures are retried and by whom. */
export function llmFailureKind(err: unknown): LlmFailureKind {
  if (err instanceof ExecutionAbortedError || err instanceof IterationTimeoutError) {
    return "aborted";
  }
  if (err instanceof LlmProviderError) return "provider";
  if (err instanceof LlmFirstChunkTimeoutError || err instanceof LlmStreamStalledError) {
    return "transport";
  }
  if (err instanceof LlmClientError) return clientFailureKind(err.code);
  return "rejected";
}
