import type { LlmClient } from "@tarsy/llm-client";

export class LlmNotServingError extends Error {
  readonly code = "llm_not_serving" as const;
}

/**
 * Ready check of the ops server: llm-service answers its gRPC health check as SERVING
 * within `timeoutMs` (with several replicas, the one the balancer picks).
 */
export function llmReadiness(llm: Pick<LlmClient, "health">, timeoutMs: number) {
  return async (): Promise<string> => {
    const status = await llm.health({ deadline: Date.now() + timeoutMs });
    if (status !== "SERVING") throw new LlmNotServingError(`llm-service health: ${status}`);
    return status;
  };
}
