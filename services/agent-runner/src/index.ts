export { ActiveExecutions } from "./active.ts";
export {
  type AbortReason,
  ExecutionAbortedError,
  IterationTimeoutError,
  LlmCallError,
  LlmProviderError,
  RunnerError,
  type RunnerErrorCode,
} from "./errors.ts";
export { type RunnerResources, runExecution } from "./execution.ts";
export type {
  AgentRunConfig,
  ExecutionContext,
  SummarizationSettings,
} from "./execution-context.ts";
export { createGatewayTools } from "./gateway.ts";
export type { RunnerStore, ToolGateway } from "./ports.ts";
export { resolveExecutionContext } from "./resolve.ts";
export { createPostgresStore } from "./store.ts";
export {
  estimateTokens,
  STORAGE_MAX_TOKENS,
  SUMMARIZATION_MAX_TOKENS,
  truncateForStorage,
  truncateForSummarization,
} from "./truncation.ts";
export { type RunnerWorker, startWorker, type WorkerOptions } from "./worker.ts";
